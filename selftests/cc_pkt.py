#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""cc_pkt.py: RoCEv2 packet helpers for selftests/cc.sh.

  cc_pkt.py cnp SRC DST DQPN [--bad-icrc] [--count N]
      send one CNP (N back to back) from SRC to DST (IPv4) through a raw
      socket, in the format a ConnectX NIC uses (IP TOS 0xc2, UDP checksum
      0, BTH opcode 0x81, P_Key 0xffff, BECN, PSN 0, 16 zero bytes, ICRC);
      --bad-icrc flips an ICRC bit
  cc_pkt.py pcap FILE
      print one line per RoCEv2 packet of a pcap capture (Ethernet, IPv4
      or IPv6): "ecn=N opcode=0xNN udp_len=N becn=N fecn=N pkey=0xNNNN
      dqpn=N psn=N body=HEX icrc_ok=0|1 src=ADDRESS"
"""
import socket
import struct
import sys
import zlib

ROCE_PORT = 4791


def icrc(l3):
    """ICRC of a RoCEv2 packet from its IP header on (trailer included)."""
    m = bytearray(l3[:-4])
    if m[0] >> 4 == 4:
        ihl = (m[0] & 15) * 4
        m[1] = 0xff                      # TOS
        m[8] = 0xff                      # TTL
        m[10:12] = b'\xff\xff'           # header checksum
    else:
        ihl = 40
        m[0] |= 0x0f                     # traffic class, flow label
        m[1:4] = b'\xff\xff\xff'
        m[7] = 0xff                      # hop limit
    m[ihl + 6:ihl + 8] = b'\xff\xff'     # UDP checksum
    m[ihl + 8 + 4] = 0xff                # BTH FECN, BECN, resv6
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + bytes(m)))


def ip_checksum(h):
    s = sum(struct.unpack('!10H', h))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def send_cnp(src, dst, dqpn, bad_icrc, count):
    bth = struct.pack('!BBHII', 0x81, 0, 0xffff, 0x40000000 | dqpn, 0)
    body = bth + bytes(16)
    udp = struct.pack('!HHHH', 0xc000, ROCE_PORT, 8 + len(body) + 4, 0)
    tot = 20 + len(udp) + len(body) + 4
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0xc2, tot, 0x98c6, 0x4000, 64,
                     17, 0, socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack('!H', ip_checksum(ip)) + ip[12:]
    pkt = ip + udp + body + bytes(4)
    crc = bytearray(icrc(pkt))
    if bad_icrc:
        crc[0] ^= 1
    pkt = pkt[:-4] + bytes(crc)
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    for _ in range(count):
        s.sendto(pkt, (dst, 0))


def parse_pcap(path):
    data = open(path, 'rb').read()
    if len(data) < 24:
        return
    magic = struct.unpack('<I', data[:4])[0]
    end = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + 'IIII', data[off:off + 16])[2]
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(frame) < 14 or len(frame) < incl:
            break                        # cut short when tcpdump stopped
        etype = struct.unpack('!H', frame[12:14])[0]
        l3 = frame[14:]
        if etype == 0x0800 and len(l3) >= 20 and l3[9] == 17:
            ihl = (l3[0] & 15) * 4
            ecn = l3[1] & 3
            src = socket.inet_ntop(socket.AF_INET, l3[12:16])
            l3 = l3[:struct.unpack('!H', l3[2:4])[0]]
        elif etype == 0x86dd and len(l3) >= 40 and l3[6] == 17:
            ihl = 40
            ecn = (struct.unpack('!I', l3[:4])[0] >> 20) & 3
            src = socket.inet_ntop(socket.AF_INET6, l3[8:24])
            l3 = l3[:40 + struct.unpack('!H', l3[4:6])[0]]
        else:
            continue
        udp = l3[ihl:ihl + 8]
        if len(udp) < 8 or struct.unpack('!H', udp[2:4])[0] != ROCE_PORT:
            continue
        bth = l3[ihl + 8:ihl + 20]
        if len(bth) < 12:
            continue
        qpn = struct.unpack('!I', bth[4:8])[0]
        psn = struct.unpack('!I', bth[8:12])[0]
        body = l3[ihl + 20:-4]
        print('ecn=%d opcode=%#04x udp_len=%d becn=%d fecn=%d pkey=%#06x '
              'dqpn=%d psn=%d body=%s icrc_ok=%d src=%s' %
              (ecn, bth[0], struct.unpack('!H', udp[4:6])[0],
               (qpn >> 30) & 1, qpn >> 31, struct.unpack('!H', bth[2:4])[0],
               qpn & 0xffffff, psn & 0xffffff,
               body.hex() if len(body) <= 16 else 'long',
               int(icrc(l3) == l3[-4:]), src))


def main(argv):
    if len(argv) >= 5 and argv[1] == 'cnp':
        count = int(argv[argv.index('--count') + 1]) if '--count' in argv[5:] else 1
        send_cnp(argv[2], argv[3], int(argv[4], 0), '--bad-icrc' in argv[5:], count)
    elif len(argv) == 3 and argv[1] == 'pcap':
        parse_pcap(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
