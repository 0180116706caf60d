"""scapy layers that scapy.contrib.roce lacks: the RDMA extended transport header (IBTA 9.3.3),
bound after the BTH of every opcode that carries one (RC and UC)."""
from scapy.contrib.roce import BTH
from scapy.fields import IntField, XIntField, XLongField
from scapy.packet import Packet, bind_layers

# WRITE FIRST, WRITE ONLY, WRITE ONLY with immediate, READ request; +0x20: the UC ones
RETH_OPCODES = (0x06, 0x0A, 0x0B, 0x0C)


class RETH(Packet):
    name = "RETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0), IntField("dlen", 0)]


for _op in RETH_OPCODES:
    bind_layers(BTH, RETH, opcode=_op)
    if _op != 0x0C:
        bind_layers(BTH, RETH, opcode=_op | 0x20)
