// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// libsroce: the provider's own objects.  Each wraps the libibverbs object it
// implements as its first member, so a pointer handed to us by libibverbs is
// converted back with from_*() below.  All are allocated with calloc (never
// on the fast path) and hold only trivially constructible members, so they
// are valid C++ objects from the moment the memory is zeroed.
#ifndef SROCE_PROVIDER_H
#define SROCE_PROVIDER_H

#include <rdma/rdma_user_ioctl_cmds.h>
#include <pthread.h>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "abi34.h"
#include "ring.h"
#include "sroce-abi.h"

namespace sroce {

struct Device {
	verbs_device vdev; // first: libibverbs owns the verbs_device part
	uint32_t abi_version;
};

struct Context {
	verbs_context vctx; // first: _verbs_init_and_alloc_context offset 0
	uint32_t max_inline_data;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	// The doorbell file (sroce-abi.h), or -1: the uverbs command instead.
	int doorbell_fd;
};

// The spinlock serialising this process's users of a queue, elided when
// the application promised to use the queue from one thread at a time: a
// QP or SRQ of a parent domain with a thread domain, a CQ of such a parent
// domain or created IBV_CREATE_CQ_ATTR_SINGLE_THREADED (ibv_alloc_td(3)).
class QueueLock {
public:
	void init() { pthread_spin_init(&lock_, PTHREAD_PROCESS_PRIVATE); }
	void destroy() { pthread_spin_destroy(&lock_); }
	void set_single_thread(bool single) { single_thread_ = single; }
	bool single_thread() const { return single_thread_; }
	void lock()
	{
		if (!single_thread_)
			pthread_spin_lock(&lock_);
	}
	void unlock()
	{
		if (!single_thread_)
			pthread_spin_unlock(&lock_);
	}

private:
	pthread_spinlock_t lock_;
	bool single_thread_;
};

// One mmap()ed ring and the lock serialising this process's users of it.
struct Queue {
	QueueLock lock;
	RingView ring;
	void *map;		// null when the ring lives in another queue's mapping
	size_t map_size;
};

// A thread domain: only a promise, kept by the parent domains naming it.
struct Td {
	ibv_td ibtd; // first
	std::atomic<uint32_t> users; // parent domains naming it
};

// A PD as the provider holds it: the kernel's (alloc_pd, import_pd), or a
// parent domain (alloc_parent_domain), which names a kernel PD (and takes
// its handle: every command sees that PD) and adds a thread domain and
// allocators.  sroce keeps no buffers of its own in the process's memory
// for the objects of a PD (their rings are the kernel's pages, mapped), so
// the allocators are accepted and never called.
struct Pd {
	ibv_pd ibpd; // first
	Pd *protection; // a parent domain's kernel PD; null for a kernel PD
	Td *td;		// a parent domain's thread domain, or null
	// A kernel PD's struct: one reference of its own, until it is
	// deallocated or unimported, and one per parent domain naming it;
	// the last one frees it.
	std::atomic<uint32_t> refs;
};

struct Cq {
	verbs_cq vcq; // first
	Queue q;
	// Extended polling: the CQE start_poll/next_poll made current, or null.
	const ib_uverbs_wc *cur;
};

struct Srq {
	verbs_srq vsrq; // first
	Queue rq;
	uint32_t max_sge;
};

struct Ah {
	ibv_ah ibah; // first
	uint32_t ah_num;
};

// What a send WQE may carry on this QP.
struct SendLimits {
	ibv_qp_type qp_type;
	uint32_t max_sge;
	uint32_t max_inline;
	bool sig_all;
};

struct Qp {
	verbs_qp vqp; // first
	Queue sq;
	Queue rq; // unmapped when the QP uses an SRQ
	SendLimits send;
	uint32_t max_recv_sge;
	Srq *srq;
	// ibv_wr_* batch state, valid between wr_start and wr_complete/abort
	// (under sq.lock).
	uint32_t wr_first;   // producer index at wr_start
	uint32_t wr_count;   // WQEs started since
	int wr_err;          // first error of the batch, 0 if none
	sroce_send_wqe *wr_cur;
};

template <typename Outer, typename Inner>
inline Outer *from_member(Inner *p)
{
	static_assert(std::is_standard_layout_v<Outer>);
	return reinterpret_cast<Outer *>(p); // the member is at offset 0
}

inline Context *from_ctx(ibv_context *c)
{
	return from_member<Context>(
		reinterpret_cast<verbs_context *>(
			reinterpret_cast<uint8_t *>(c) -
			offsetof(verbs_context, context)));
}
inline Cq *from_cq(ibv_cq *cq) { return from_member<Cq>(cq); }
inline Cq *from_cq_ex(ibv_cq_ex *cq) { return from_member<Cq>(cq); }
inline Qp *from_qp(ibv_qp *qp) { return from_member<Qp>(qp); }
inline Qp *from_qp_ex(ibv_qp_ex *qp) { return from_member<Qp>(qp); }
inline Srq *from_srq(ibv_srq *srq) { return from_member<Srq>(srq); }
inline Ah *from_ah(ibv_ah *ah) { return from_member<Ah>(ah); }
inline Pd *from_pd(ibv_pd *pd) { return from_member<Pd>(pd); }
inline Td *from_td(ibv_td *td) { return from_member<Td>(td); }

// True if objects of @pd are used by one thread at a time (its thread
// domain): their queues need no lock.
inline bool pd_single_thread(ibv_pd *pd)
{
	return pd && from_pd(pd)->td;
}

// A core uverbs response with sroce's driver data appended, as libibverbs
// expects it: contiguous, the driver part starting exactly at the core
// struct's size.  (In C++ a struct ending in a flexible array cannot be a
// member followed by more fields, hence the byte buffer.)
template <typename Core, typename Drv>
struct alignas(8) DrvResp {
	unsigned char bytes[sizeof(Core) + sizeof(Drv)];

	Core *core() { return reinterpret_cast<Core *>(bytes); }
	Drv drv() const
	{
		Drv d;
		__builtin_memcpy(&d, bytes + sizeof(Core), sizeof(d));
		return d;
	}
};

// A uverbs command with sroce's driver data appended (DrvResp's mirror).
template <typename Cmd, typename Drv>
struct alignas(8) DrvCmd {
	unsigned char bytes[sizeof(Cmd) + sizeof(Drv)];

	Cmd *cmd() { return reinterpret_cast<Cmd *>(bytes); }
	void set_drv(const Drv &d)
	{
		__builtin_memcpy(bytes + sizeof(Cmd), &d, sizeof(d));
	}
};

// ---- entry points, grouped by the file that implements them ----

// device.cpp
const verbs_device_ops *device_ops();

// context.cpp
verbs_context *context_alloc(ibv_device *ibdev, int cmd_fd,
			     void *private_data);
verbs_context *context_import(ibv_device *ibdev, int cmd_fd);
const verbs_context_ops *context_ops();

// uverbs_ioctl.cpp: -1 and errno on failure
int uverbs_ioctl(int cmd_fd, uint16_t object, uint16_t method,
		 ib_uverbs_attr *attrs, unsigned int num_attrs);

// queue.cpp
int queue_map(Queue *q, ibv_context *ctx, const sroce_ring_info &info,
	      uint32_t min_entry, bool optional = false);
int queue_share(Queue *q, const Queue &owner, const sroce_ring_info &owner_info,
		const sroce_ring_info &info, uint32_t min_entry);
void queue_unmap(Queue *q);

// pd.cpp / mr.cpp
ibv_pd *alloc_pd(ibv_context *ctx);
int dealloc_pd(ibv_pd *pd);
ibv_pd *import_pd(ibv_context *ctx, uint32_t pd_handle);
void unimport_pd(ibv_pd *pd);
ibv_pd *alloc_parent_domain(ibv_context *ctx,
			    ibv_parent_domain_init_attr *attr);
ibv_td *alloc_td(ibv_context *ctx, ibv_td_init_attr *attr);
int dealloc_td(ibv_td *td);
ibv_mr *import_mr(ibv_pd *pd, uint32_t mr_handle);
void unimport_mr(ibv_mr *mr);
ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
	       int access);
int dereg_mr(verbs_mr *vmr);
int rereg_mr(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr, size_t length,
	     int access);

// mw.cpp
ibv_mw *alloc_mw(ibv_pd *pd, ibv_mw_type type);
int dealloc_mw(ibv_mw *mw);
int bind_mw(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind);

// cq.cpp
ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *channel,
		  int comp_vector);
ibv_cq_ex *create_cq_ex(ibv_context *ctx, ibv_cq_init_attr_ex *attr);
int poll_cq(ibv_cq *cq, int ne, ibv_wc *wc);
void cq_clean(Cq *cq, uint32_t qp_num, bool keep_recv);
int cq_replace_ring(Cq *cq, ibv_context *ctx, const sroce_ring_info &info);
int resize_cq(ibv_cq *cq, int cqe);
int destroy_cq(ibv_cq *cq);
void install_poll_ops(ibv_cq_ex *cqx, uint64_t wc_flags);

// qp.cpp
ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr);
ibv_qp *create_qp_ex(ibv_context *ctx, ibv_qp_init_attr_ex *attr);
ibv_qp *open_qp(ibv_context *ctx, ibv_qp_open_attr *attr);
int modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int mask);
int query_qp(ibv_qp *qp, ibv_qp_attr *attr, int mask,
	     ibv_qp_init_attr *init_attr);
int destroy_qp(ibv_qp *qp);
// SROCE_SQ_POLL_US's value: true and *us if TEXT is a decimal number of
// microseconds (null or empty: 0), false otherwise.
bool parse_sq_poll_us(const char *text, uint32_t *us);

// post.cpp (data path)
int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
int post_send_bind(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr,
		   bool by_verb);
int post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
int post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
// The doorbell: "look at the SQ" (also the RQ flush in the error state),
// through the context's doorbell file when it has one.
int ring_doorbell(Qp *qp);
// After posting sends: the doorbell unless the kernel polls the SQ.
int ring_send_doorbell(Qp *qp);
bool send_state_ok(ibv_qp_state s);

// wr_ex.cpp
void install_wr_ops(ibv_qp_ex *qpx);

// srq.cpp
ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr);
ibv_srq *create_srq_ex(ibv_context *ctx, ibv_srq_init_attr_ex *attr);
int get_srq_num(ibv_srq *srq, uint32_t *srq_num);
int modify_srq(ibv_srq *srq, ibv_srq_attr *attr, int mask);
int query_srq(ibv_srq *srq, ibv_srq_attr *attr);
int destroy_srq(ibv_srq *srq);

// xrcd.cpp
ibv_xrcd *open_xrcd(ibv_context *ctx, ibv_xrcd_init_attr *attr);
int close_xrcd(ibv_xrcd *xrcd);

// ah.cpp
ibv_ah *create_ah(ibv_pd *pd, ibv_ah_attr *attr);
int destroy_ah(ibv_ah *ah);

} // namespace sroce

#endif // SROCE_PROVIDER_H
