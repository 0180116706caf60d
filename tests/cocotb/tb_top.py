"""cocotb tests of rnic_top: BAR0 (self-describing blocks, identity, clock, context registers,
firmware boot) and the Ethernet port (the firmware answers ARP; a frame with a bad ICRC is
dropped and counted)."""
import sys
import pathlib

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from scapy.compat import raw
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "spec" / "gen"))
import rnic_spec as S  # noqa: E402

MAC, IP_ADDR = 0x020000000042, "10.1.2.3"


async def start(dut):
    cocotb.start_soon(Clock(dut.clk, 4, units="ns").start())
    dut.strap_mac.value = MAC
    dut.strap_ipv4.value = 0x0A010203
    for sig in ("s_axil_awvalid", "s_axil_wvalid", "s_axil_arvalid", "s_dma_rd_valid", "s_dma_rd_err",
                "s_axis_eth_rx_tvalid", "m_dma_rd_req_ready", "m_dma_wr_ready"):
        getattr(dut, sig).value = 0
    dut.s_axil_bready.value = 1
    dut.s_axil_rready.value = 1
    dut.s_axil_wstrb.value = 0xF
    dut.irq_ready.value = 1
    dut.m_axis_eth_tx_tready.value = 1
    dut.rst.value = 1
    await ClockCycles(dut.clk, 8)
    dut.rst.value = 0


async def read32(dut, addr):
    dut.s_axil_araddr.value = addr
    dut.s_axil_arvalid.value = 1
    while True:
        await RisingEdge(dut.clk)
        if dut.s_axil_arready.value:
            break
    dut.s_axil_arvalid.value = 0
    while True:
        await RisingEdge(dut.clk)
        if dut.s_axil_rvalid.value:
            return int(dut.s_axil_rdata.value)


async def write32(dut, addr, value):
    dut.s_axil_awaddr.value = addr
    dut.s_axil_wdata.value = value
    dut.s_axil_awvalid.value = 1
    dut.s_axil_wvalid.value = 1
    while True:
        await RisingEdge(dut.clk)
        if dut.s_axil_awready.value:
            break
    dut.s_axil_awvalid.value = 0
    dut.s_axil_wvalid.value = 0
    while True:
        await RisingEdge(dut.clk)
        if dut.s_axil_bvalid.value:
            return


async def wait_fw_ready(dut):
    for _ in range(400):
        if await read32(dut, S.ID["FW_STATUS"][0]) & 1:
            return
        await ClockCycles(dut.clk, 2000)
    raise AssertionError("firmware did not become ready")


async def send_frame(dut, frame):
    for off in range(0, len(frame), 64):
        chunk = frame[off:off + 64]
        dut.s_axis_eth_rx_tdata.value = int.from_bytes(chunk.ljust(64, b"\0"), "little")
        dut.s_axis_eth_rx_tkeep.value = (1 << len(chunk)) - 1
        dut.s_axis_eth_rx_tlast.value = int(off + 64 >= len(frame))
        dut.s_axis_eth_rx_tvalid.value = 1
        await RisingEdge(dut.clk)
    dut.s_axis_eth_rx_tvalid.value = 0


async def receive_frame(dut, cycles):
    data = b""
    for _ in range(cycles):
        await RisingEdge(dut.clk)
        if dut.m_axis_eth_tx_tvalid.value and dut.m_axis_eth_tx_tready.value:
            keep = int(dut.m_axis_eth_tx_tkeep.value)
            beat = int(dut.m_axis_eth_tx_tdata.value).to_bytes(64, "little")
            data += beat[:bin(keep).count("1")]
            if dut.m_axis_eth_tx_tlast.value:
                return data
    return None


@cocotb.test()
async def bar0_blocks(dut):
    await start(dut)
    off, types = 0, []
    for _ in range(16):
        types.append(await read32(dut, off + S.BLK["TYPE"][0]))
        assert await read32(dut, off + S.BLK["VERSION"][0]) == 1
        nxt = await read32(dut, off + S.BLK["NEXT"][0])
        size = await read32(dut, off + S.BLK["SIZE"][0])
        assert off + size <= (nxt or S.BAR0_CTX_BASE)
        if types[-1] == S.BLOCK_TYPE_STATS:  # it holds every counter
            assert S.STATS["COUNTER0"][0] + 4 * await read32(dut, S.STATS["COUNT"][0]) <= off + size
        if not nxt:
            break
        assert nxt > off
        off = nxt
    assert types == [S.BLOCK_TYPE_ID, S.BLOCK_TYPE_CLOCK, S.BLOCK_TYPE_PORT, S.BLOCK_TYPE_ADMIN,
                     S.BLOCK_TYPE_CTX, S.BLOCK_TYPE_STATS]
    assert await read32(dut, S.ID["VENDOR_DEVICE"][0]) == S.VENDOR_ID | (S.DEVICE_ID << 16)
    assert await read32(dut, S.ID["IF_VERSION"][0]) == S.IF_VERSION
    assert await read32(dut, S.ID["BUILD_ID"][0]) == 0x12345678
    c0 = await read32(dut, S.CLOCK["CYCLES_LO"][0])
    c1 = await read32(dut, S.CLOCK["CYCLES_LO"][0])
    assert c1 > c0
    assert await read32(dut, S.ID["CMDQ_BASE"][0]) == S.BAR0_CMDQ_BASE
    cmdq, db = (base + 3 * S.BAR0_CTX_STRIDE for base in (S.BAR0_CMDQ_BASE, S.BAR0_CTX_BASE))
    await write32(dut, cmdq + S.CTX["CMDQ_BASE_LO"][0], 0xCAFE0000)
    assert await read32(dut, cmdq + S.CTX["CMDQ_BASE_LO"][0]) == 0xCAFE0000
    assert await read32(dut, S.BAR0_CMDQ_BASE + S.CTX["CMDQ_BASE_LO"][0]) == 0
    # the doorbell page, which a process maps, cannot reach the command queue's registers
    await write32(dut, db + S.CTX["CMDQ_BASE_LO"][0], 0x12340000)
    assert await read32(dut, db + S.CTX["CMDQ_BASE_LO"][0]) == 0
    assert await read32(dut, cmdq + S.CTX["CMDQ_BASE_LO"][0]) == 0xCAFE0000
    await wait_fw_ready(dut)
    assert await read32(dut, S.ID["FW_VERSION"][0]) == 0x000100


@cocotb.test()
async def ethernet_arp_and_bad_icrc(dut):
    await start(dut)
    await wait_fw_ready(dut)
    req = Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:77") / ARP(
        op=1, hwsrc="02:00:00:00:00:77", psrc="10.1.2.9", pdst=IP_ADDR)
    await send_frame(dut, raw(req))
    reply = await receive_frame(dut, 20000)
    assert reply is not None, "no ARP reply"
    pkt = Ether(reply)
    assert pkt[ARP].op == 2 and pkt[ARP].psrc == IP_ADDR and pkt[ARP].hwsrc == "02:00:00:00:00:42"
    assert pkt[ARP].pdst == "10.1.2.9" and pkt.dst == "02:00:00:00:00:77"

    before = await read32(dut, S.STATS["COUNTER0"][0] + 4 * S.STAT["RX_DROP_ICRC"])
    frame = bytearray(raw(Ether(dst="02:00:00:00:00:42", src="02:00:00:00:00:77") /
                          IP(src="10.1.2.9", dst=IP_ADDR) / UDP(sport=0xC000, dport=4791) /
                          BTH(opcode=0x0A, dqpn=2, psn=0) / (b"\0" * 16 + b"x" * 32)))
    frame[-1] ^= 0xFF
    await send_frame(dut, bytes(frame))
    await ClockCycles(dut.clk, 50)
    assert await read32(dut, S.STATS["COUNTER0"][0] + 4 * S.STAT["RX_DROP_ICRC"]) == before + 1
    assert not dut.m_dma_wr_valid.value
