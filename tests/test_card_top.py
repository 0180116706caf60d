"""The card image's top (bitstreams/common/rnic_card_top.sv) against what the product guides ask of
the vendor IP it instantiates (bitstreams/common/vendor_ip.toml, port by port): every port it
connects exists with that direction and width, every input a guide requires is connected, and a
clock input is driven by a clock, not a constant; a top that leaves one out fails, and so does one
that names a port the IP does not have. Verilator checks every width of the top with the IP as
stubs; each board's constraints place every pin of the top and set the flash's configuration."""
import pathlib
import re
import subprocess
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
COMMON = ROOT / "bitstreams" / "common"
TOP = COMMON / "rnic_card_top.sv"
IP = {ip["module"]: ip for ip in tomllib.loads((COMMON / "vendor_ip.toml").read_text())["ip"]}
BOARDS = ("u250", "u280", "u55c")


def instances(text):
    """{instance name: (module, {port: connected expression})} of the vendor IP in a top's text"""
    text = re.sub(r"//[^\n]*", "", text)
    found = {}
    for m in re.finditer(r"\b(\w+)\s*(?:#\s*\((?:[^()]|\([^()]*\))*\)\s*)?(\w+)\s*\(((?:[^;])*?)\);", text):
        module, name, body = m.groups()
        if module not in IP:
            continue
        conns = {}
        for c in re.finditer(r"\.(\w+)\s*(\((?:[^()]|\([^()]*\))*\))?", body):
            port, expr = c.group(1), c.group(2)
            conns[port] = port if expr is None else expr[1:-1].strip()   # .name is .name(name)
        found[name] = (module, conns)
    return found


def problems(text):
    out = []
    insts = instances(text)
    for name, (module, conns) in insts.items():
        ports = {p[0]: p for p in IP[module]["ports"]}
        for port, expr in conns.items():
            if port not in ports:
                out.append(f"{name}: {module} has no port {port}")
        for port, d, _, role in ports.values():
            if d != "in" or role == "optional":
                continue
            expr = conns.get(port)
            if not expr:
                out.append(f"{name}.{port} ({role}) is not connected ({IP[module]['guide']})")
            elif role == "clock" and re.fullmatch(r"(\d+'[bdh])?[0-9a-fA-F_]+", expr):
                out.append(f"{name}.{port} is a clock tied to {expr}")
    for module in ("rnic_xdma", "rnic_cmac", "rnic_qspi"):
        if module not in {m for m, _ in insts.values()}:
            out.append(f"no {module}")
    return out


def test_every_port_the_guides_require_is_connected():
    assert problems(TOP.read_text()) == []


@pytest.mark.parametrize("port,want", [("init_clk", "cmac.init_clk (clock) is not connected"),
                                       ("rx_clk", "cmac.rx_clk (clock) is not connected"),
                                       ("sys_reset", "cmac.sys_reset (reset) is not connected"),
                                       ("usr_irq_req", "xdma.usr_irq_req (required) is not connected")])
def test_a_port_left_out_fails(port, want):
    text = re.sub(rf"\.{port}(\((?:[^()]|\([^()]*\))*\))?(?=\s*[,)])", f".{port}()", TOP.read_text(), count=1)
    assert any(p.startswith(want) for p in problems(text)), problems(text)


def test_a_clock_tied_to_a_constant_or_a_port_misnamed_fails():
    text = TOP.read_text().replace(".init_clk(clk125)", ".init_clk(1'b0)")
    assert "cmac.init_clk is a clock tied to 1'b0" in problems(text)
    text = TOP.read_text().replace(".drp_clk(clk125)", ".drp_clock(clk125)")
    assert "cmac: rnic_cmac has no port drp_clock" in problems(text)


@pytest.mark.parametrize("cattrip", [False, True])
def test_top_lints_with_the_ip_as_stubs(tmp_path, cattrip):
    import sys
    sys.path.insert(0, str(ROOT / "hw" / "synth"))
    import yosys_synth
    (tmp_path / "stubs.v").write_text("/* verilator lint_off UNUSEDSIGNAL */\n/* verilator lint_off UNDRIVEN */\n/* verilator lint_off UNUSEDPARAM */\n" +
                                      yosys_synth.stubs(COMMON / "vendor_ip.toml"))
    srcs = subprocess.run(["make", "-s", "--no-print-directory", "-f", "-", "print"], cwd=ROOT, text=True,
                          capture_output=True, check=True,
                          input="include Makefile\nprint:\n\t@echo $(CARD_IMAGE_SRCS)\n").stdout.split()
    r = subprocess.run(["verilator", "--lint-only", "-Wall", "-Wno-DECLFILENAME", "-Wno-PINCONNECTEMPTY",
                        "--timescale", "1ns/1ps", *(["+define+RNIC_HBM_CATTRIP"] if cattrip else []),
                        str(ROOT / "hw" / "rtl" / "picorv32.vlt"), "--top-module", "rnic_card_top",
                        str(tmp_path / "stubs.v"), *srcs], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]


def top_ports(cattrip):
    text = re.sub(r"//[^\n]*", "", TOP.read_text())
    head = text[text.index("module rnic_card_top"):text.index(");", text.index(") ("))]
    if not cattrip:
        head = re.sub(r"`ifdef RNIC_HBM_CATTRIP.*?`endif", "", head, flags=re.S)
    ports = {}
    for m in re.finditer(r"(input|output)\s+wire\s+(?:\[(\d+):0\]\s+)?(\w+)", head):
        ports[m.group(3)] = int(m.group(2) or 0) + 1
    return ports


@pytest.mark.parametrize("board", BOARDS)
def test_constraints_place_every_pin_and_set_the_flash(board):
    """Each pin of the top a package pin (the GT lanes are the CMAC's and XDMA's own: their
    IP places them from the board interface), clocks declared, the flash's configuration"""
    conf = dict(re.findall(r"^(\w+)\s*=\s*(.+)$", (ROOT / "bitstreams" / board / "board.conf").read_text(), re.M))
    xdc = re.sub(r"#[^\n]*", "", (ROOT / "bitstreams" / board / "rnic.xdc").read_text() +
                 (COMMON / "config.xdc").read_text())
    cattrip = conf.get("hbm_cattrip") == "yes"
    placed = set(re.findall(r"PACKAGE_PIN\s+\w+\s+\[get_ports\s+(\w+)\]", xdc))
    placed |= set(re.findall(r"-dict\s+\{PACKAGE_PIN\s+\w+[^}]*\}\s+\[get_ports\s+(\w+)\]", xdc))
    gt = {"pci_exp_rxp", "pci_exp_rxn", "pci_exp_txp", "pci_exp_txn", "qsfp_rxp", "qsfp_rxn", "qsfp_txp", "qsfp_txn"}
    want = {p for p in top_ports(cattrip) if p not in gt}
    assert want <= placed, want - placed
    assert ("hbm_cattrip" in placed) == cattrip
    if cattrip:
        assert re.search(r"\{[^}]*PULLDOWN\s+TRUE[^}]*\}\s+\[get_ports\s+hbm_cattrip\]", xdc), "pulled low"
    for prop, value in (("CONFIG_MODE", "SPIx4"), ("CONFIG_VOLTAGE", "1.8"), ("CFGBVS", "GND"),
                        ("BITSTREAM.CONFIG.SPI_32BIT_ADDR", "YES"), ("BITSTREAM.CONFIG.SPI_BUSWIDTH", "4")):
        assert re.search(rf"set_property\s+{re.escape(prop)}\s+{re.escape(value)}\s+\[current_design\]", xdc), prop
    clocks = re.findall(r"create_clock\s+-period\s+([\d.]+)\s+-name\s+\w+\s+\[get_ports\s+(\w+)\]", xdc)
    assert {p for _, p in clocks} == {"pcie_refclk_p", "qsfp_refclk_p", "sysclk_p"}, clocks
    periods = {p: float(t) for t, p in clocks}
    assert abs(periods["sysclk_p"] - 1000 / int(conf["sysclk_mhz"])) < 0.01
    assert abs(periods["qsfp_refclk_p"] - 1000 / float(conf["qsfp_refclk_mhz"])) < 0.01
    assert periods["pcie_refclk_p"] == 10.0
