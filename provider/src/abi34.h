/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The part of rdma-core's private provider interface (IBVERBS_PRIVATE_34,
 * rdma-core v44 libibverbs/driver.h and kern-abi.h) that libsroce uses.
 *
 * Debian ships only the public headers (<infiniband/verbs.h>), so the
 * provider structs, the command wrappers and the ibv_cmd_* prototypes are
 * declared here, once.  Every size and offset that libibverbs relies on is
 * pinned with a static_assert: a wrong declaration fails the build instead
 * of corrupting memory at run time.  The numbers were measured against
 * rdma-core v44.0 and Debian's libibverbs 44.0 (see
 * shared/reference/rdma-core-provider-abi.md).
 *
 * Only symbol names and the pointer ABI matter when calling into
 * libibverbs, so the command wrapper tags carry a sroce_ prefix instead of
 * rdma-core's names.
 */
#ifndef SROCE_ABI34_H
#define SROCE_ABI34_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- driver.h: device matching and registration ---------------------- */

struct sroce_list_node {
	struct sroce_list_node *next, *prev;
};

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

struct verbs_sysfs_dev {
	struct sroce_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[64];
	dev_t sysfs_cdev;
	char ibdev_name[64];
	char ibdev_path[256];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	int refcount;			/* atomic_int in C; libibverbs owns it */
	struct sroce_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* ---- driver.h: object wrappers filled in by the ibv_cmd_* helpers ---- */

enum ibv_mr_type_34 {
	IBV_MR_TYPE_MR = 0,
	IBV_MR_TYPE_NULL_MR = 1,
	IBV_MR_TYPE_IMPORTED_MR = 2,
	IBV_MR_TYPE_DMABUF_MR = 3,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type_34 mr_type;
	int access;
};

enum {
	VERBS_XRCD_HANDLE = 1 << 0,
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

enum {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* ---- driver.h: the context ops table (76 slots, sorted, PABI 34) ------ */

struct ibv_ops_wr;	/* only ever used through pointers */

struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(
		struct ibv_context *context,
		struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(
		struct ibv_context *context,
		struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp,
				      enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* ---- kern-abi.h: command wrappers (header + uverbs core payload) ------ */

struct sroce_ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define SROCE_LEGACY_CMD(name)                                                \
	struct sroce_cmd_##name {                                             \
		struct ib_uverbs_cmd_hdr hdr;                                 \
		struct ib_uverbs_##name core;                                 \
	}
#define SROCE_EX_CMD(name, core_name)                                         \
	struct sroce_cmd_##name {                                             \
		struct sroce_ex_hdr hdr;                                      \
		struct ib_uverbs_##core_name core;                            \
	}

SROCE_LEGACY_CMD(get_context);
SROCE_LEGACY_CMD(query_port);
SROCE_LEGACY_CMD(alloc_pd);
SROCE_LEGACY_CMD(reg_mr);
SROCE_LEGACY_CMD(alloc_mw);
SROCE_LEGACY_CMD(rereg_mr);
SROCE_LEGACY_CMD(create_cq);
SROCE_EX_CMD(ex_create_cq, ex_create_cq);
SROCE_LEGACY_CMD(resize_cq);
SROCE_LEGACY_CMD(create_qp);
SROCE_EX_CMD(ex_create_qp, ex_create_qp);
SROCE_LEGACY_CMD(modify_qp);
SROCE_LEGACY_CMD(query_qp);
SROCE_LEGACY_CMD(create_srq);
SROCE_LEGACY_CMD(create_xsrq);
SROCE_LEGACY_CMD(open_xrcd);
SROCE_LEGACY_CMD(open_qp);
SROCE_LEGACY_CMD(modify_srq);
SROCE_LEGACY_CMD(query_srq);
SROCE_LEGACY_CMD(post_send);

#undef SROCE_LEGACY_CMD
#undef SROCE_EX_CMD

/* ---- PRIVATE_34 functions we call ----------------------------------- */

/*
 * Every PRIVATE_34 function declared below, for the test that checks each
 * one resolves with dlvsym(..., "IBVERBS_PRIVATE_34") in the installed
 * libibverbs.so.1.  Keep it in step with the prototypes.
 */
#define SROCE_PRIVATE34_SYMBOLS(X)                                            \
	X(verbs_register_driver_34)                                           \
	X(_verbs_init_and_alloc_context)                                      \
	X(verbs_set_ops)                                                      \
	X(verbs_uninit_context)                                               \
	X(verbs_init_cq)                                                      \
	X(ibv_cmd_get_context)                                                \
	X(ibv_cmd_query_context)                                              \
	X(ibv_cmd_query_mr)                                                   \
	X(ibv_cmd_query_device_any)                                           \
	X(ibv_cmd_query_port)                                                 \
	X(ibv_cmd_alloc_pd)                                                   \
	X(ibv_cmd_dealloc_pd)                                                 \
	X(ibv_cmd_reg_mr)                                                     \
	X(ibv_cmd_dereg_mr)                                                   \
	X(ibv_cmd_rereg_mr)                                                   \
	X(ibv_cmd_advise_mr)                                                  \
	X(ibv_cmd_alloc_mw)                                                   \
	X(ibv_cmd_dealloc_mw)                                                 \
	X(ibv_cmd_create_cq)                                                  \
	X(ibv_cmd_create_cq_ex)                                               \
	X(ibv_cmd_resize_cq)                                                  \
	X(ibv_cmd_destroy_cq)                                                 \
	X(ibv_cmd_req_notify_cq)                                              \
	X(ibv_cmd_create_qp_ex2)                                              \
	X(ibv_cmd_modify_qp)                                                  \
	X(ibv_cmd_query_qp)                                                   \
	X(ibv_cmd_destroy_qp)                                                 \
	X(ibv_cmd_create_srq)                                                 \
	X(ibv_cmd_create_srq_ex)                                              \
	X(ibv_cmd_open_xrcd)                                                  \
	X(ibv_cmd_close_xrcd)                                                 \
	X(ibv_cmd_open_qp)                                                    \
	X(ibv_cmd_modify_srq)                                                 \
	X(ibv_cmd_query_srq)                                                  \
	X(ibv_cmd_destroy_srq)                                                \
	X(ibv_cmd_create_ah)                                                  \
	X(ibv_cmd_destroy_ah)                                                 \
	X(ibv_cmd_attach_mcast)                                               \
	X(ibv_cmd_detach_mcast)

void verbs_register_driver_34(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
void verbs_uninit_context(struct verbs_context *context);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);

int ibv_cmd_get_context(struct verbs_context *context,
			struct sroce_cmd_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
/*
 * Fills context->num_comp_vectors and the device's core support flags
 * (UVERBS_METHOD_QUERY_CONTEXT); @driver links driver attributes in a
 * command buffer of rdma-core's private layout, so we pass none and ask
 * for ours with a second ioctl of our own.
 */
struct ibv_command_buffer;
int ibv_cmd_query_context(struct ibv_context *ctx,
			  struct ibv_command_buffer *driver);
/* UVERBS_METHOD_QUERY_MR: keys and length, mr_type IBV_MR_TYPE_IMPORTED_MR. */
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr,
		     uint32_t mr_handle);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
/* UVERBS_METHOD_ADVISE_MR: prefetch ranges of on-demand paged MRs. */
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct sroce_cmd_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct sroce_cmd_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct sroce_cmd_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct sroce_cmd_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct sroce_cmd_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct sroce_cmd_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq,
			 struct sroce_cmd_ex_create_cq *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct sroce_cmd_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct sroce_cmd_ex_create_qp *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct sroce_cmd_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct sroce_cmd_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct sroce_cmd_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct sroce_cmd_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct sroce_cmd_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct sroce_cmd_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct sroce_cmd_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct sroce_cmd_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- layout checks (x86_64, rdma-core v44 / Debian libibverbs 44.0) --- */

#ifdef __cplusplus
#define SROCE_ABI_ASSERT(cond) static_assert(cond, #cond)
#else
#define SROCE_ABI_ASSERT(cond) _Static_assert(cond, #cond)
#endif

/* Public structs we embed: if verbs.h changed under us, stop here. */
SROCE_ABI_ASSERT(sizeof(struct ibv_device) == 664);
SROCE_ABI_ASSERT(sizeof(struct ibv_context) == 328);
SROCE_ABI_ASSERT(sizeof(struct verbs_context) == 648);
SROCE_ABI_ASSERT(offsetof(struct verbs_context, priv) == 208);
SROCE_ABI_ASSERT(offsetof(struct verbs_context, sz) == 312);
SROCE_ABI_ASSERT(offsetof(struct verbs_context, context) == 320);
SROCE_ABI_ASSERT(sizeof(struct ibv_mr) == 48);
SROCE_ABI_ASSERT(sizeof(struct ibv_qp) == 160);
SROCE_ABI_ASSERT(sizeof(struct ibv_qp_ex) == 352);
SROCE_ABI_ASSERT(sizeof(struct ibv_cq) == 128);
SROCE_ABI_ASSERT(sizeof(struct ibv_cq_ex) == 288);
SROCE_ABI_ASSERT(sizeof(struct ibv_wc) == 48);

SROCE_ABI_ASSERT(sizeof(struct verbs_match_ent) == 24);
SROCE_ABI_ASSERT(offsetof(struct verbs_match_ent, u) == 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_match_ent, vendor) == 16);
SROCE_ABI_ASSERT(offsetof(struct verbs_match_ent, device) == 18);
SROCE_ABI_ASSERT(offsetof(struct verbs_match_ent, kind) == 20);

SROCE_ABI_ASSERT(sizeof(struct verbs_sysfs_dev) == 992);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, provider_data) == 16);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, match) == 24);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, flags) == 32);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, sysfs_cdev) == 104);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, ibdev_name) == 112);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, modalias) == 432);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, node_guid) == 944);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, driver_id) == 952);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, node_type) == 956);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, ibdev_idx) == 960);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, num_ports) == 964);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, abi_ver) == 968);
SROCE_ABI_ASSERT(offsetof(struct verbs_sysfs_dev, time_created) == 976);

SROCE_ABI_ASSERT(sizeof(struct verbs_device_ops) == 72);
SROCE_ABI_ASSERT(offsetof(struct verbs_device_ops, match_min_abi_version) == 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_device_ops, match_max_abi_version) == 12);
SROCE_ABI_ASSERT(offsetof(struct verbs_device_ops, match_table) == 16);
SROCE_ABI_ASSERT(offsetof(struct verbs_device_ops, static_providers) == 24);
SROCE_ABI_ASSERT(offsetof(struct verbs_device_ops, match_device) == 32);
SROCE_ABI_ASSERT(offsetof(struct verbs_device_ops, alloc_context) == 40);
SROCE_ABI_ASSERT(offsetof(struct verbs_device_ops, import_context) == 48);
SROCE_ABI_ASSERT(offsetof(struct verbs_device_ops, alloc_device) == 56);
SROCE_ABI_ASSERT(offsetof(struct verbs_device_ops, uninit_device) == 64);

SROCE_ABI_ASSERT(sizeof(struct verbs_device) == 712);
SROCE_ABI_ASSERT(offsetof(struct verbs_device, ops) == 664);
SROCE_ABI_ASSERT(offsetof(struct verbs_device, refcount) == 672);
SROCE_ABI_ASSERT(offsetof(struct verbs_device, entry) == 680);
SROCE_ABI_ASSERT(offsetof(struct verbs_device, sysfs) == 696);
SROCE_ABI_ASSERT(offsetof(struct verbs_device, core_support) == 704);

SROCE_ABI_ASSERT(sizeof(struct verbs_mr) == 56);
SROCE_ABI_ASSERT(offsetof(struct verbs_mr, mr_type) == 48);
SROCE_ABI_ASSERT(offsetof(struct verbs_mr, access) == 52);
SROCE_ABI_ASSERT(sizeof(struct verbs_qp) == 368);
SROCE_ABI_ASSERT(offsetof(struct verbs_qp, comp_mask) == 352);
SROCE_ABI_ASSERT(offsetof(struct verbs_qp, xrcd) == 360);
SROCE_ABI_ASSERT(sizeof(struct verbs_cq) == 288);
SROCE_ABI_ASSERT(sizeof(struct verbs_srq) == 160);
SROCE_ABI_ASSERT(sizeof(struct verbs_xrcd) == sizeof(struct ibv_xrcd) + 8);

/* 76 pointers; spot-check the slots named in the notes. */
SROCE_ABI_ASSERT(sizeof(struct verbs_context_ops) == 608);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, alloc_pd) == 5 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, create_cq) == 15 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, create_qp_ex) == 20 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, dereg_mr) == 28 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, free_context) == 39 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, import_dm) == 42 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, modify_qp) == 47 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, poll_cq) == 424);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, post_send) == 440);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, query_device_ex) == 58 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, query_port) == 60 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, reg_mr) == 68 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, resize_cq) == 71 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, unimport_pd) == 600);

/* Command wrappers: libibverbs splits core and driver data at its own sizeof. */
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_cmd_hdr) == 8);
SROCE_ABI_ASSERT(sizeof(struct sroce_ex_hdr) == 24);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_get_context) == 16);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_query_port) == 24);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_alloc_pd) == 16);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_reg_mr) == 48);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_rereg_mr) == 56);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_create_cq) == 40);
SROCE_ABI_ASSERT(offsetof(struct sroce_cmd_create_cq, core) == 8);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_ex_create_cq) == 56);
SROCE_ABI_ASSERT(offsetof(struct sroce_cmd_ex_create_cq, core) == 24);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_resize_cq) == 24);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_create_qp) == 64);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_ex_create_qp) == 88);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_modify_qp) == 120);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_query_qp) == 24);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_create_srq) == 40);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_modify_srq) == 24);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_create_xsrq) == 56);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_open_xrcd) == 24);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_open_qp) == 40);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_query_srq) == 24);
SROCE_ABI_ASSERT(sizeof(struct sroce_cmd_post_send) == 32);
SROCE_ABI_ASSERT(offsetof(struct sroce_cmd_post_send, core.response) == 8);
SROCE_ABI_ASSERT(offsetof(struct sroce_cmd_post_send, core.qp_handle) == 16);

SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_get_context_resp) == 8);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_alloc_pd_resp) == 4);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_reg_mr_resp) == 12);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_create_cq_resp) == 8);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_ex_create_cq_resp) == 16);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_create_qp_resp) == 32);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_ex_create_qp_resp) == 40);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_create_srq_resp) == 16);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_open_xrcd_resp) == 4);
SROCE_ABI_ASSERT(offsetof(struct verbs_srq, srq_num) == 152);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, open_xrcd) == 52 * 8);
SROCE_ABI_ASSERT(offsetof(struct verbs_context_ops, get_srq_num) == 41 * 8);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_create_ah_resp) == 4);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_resize_cq_resp) == 8);
SROCE_ABI_ASSERT(sizeof(struct ib_uverbs_ex_query_device_resp) == 304);

#endif /* SROCE_ABI34_H */
