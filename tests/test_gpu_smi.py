"""nvidia-smi tables from the simulator equal the reference captures (shared/reference/mig.md §2).

The expected rows below are transcribed from the reference's per-board tables (real
``nvidia-smi mig -lgip`` captures) independently of ``data/gpus/``, so a wrong data file fails
here. ``None`` marks a figure the reference does not give.
"""

from __future__ import annotations

import pytest

from labkit.gpu import smi
from tests.conftest import SimFactory

# name, ID, Total, GiB, SM, DEC, ENC, CE, JPEG, OFA  (lgip columns)
H100_ENGINES = [(1, 0, 1, 1, 0), (1, 0, 1, 1, 1), (1, 0, 1, 1, 0), (2, 0, 2, 2, 0),
                (3, 0, 3, 3, 0), (4, 0, 4, 4, 0), (7, 0, 8, 7, 1)]  # DEC, ENC, CE, JPEG, OFA


def _h100_like(names: list[str], gib: list[str], sms: list[int]) -> list[tuple]:
    ids, totals = [19, 20, 15, 14, 9, 5, 0], [7, 1, 4, 3, 2, 1, 1]
    return [(n, i, t, g, s, *e) for n, i, t, g, s, e in zip(names, ids, totals, gib, sms,
                                                             H100_ENGINES, strict=True)]


REFERENCE_LGIP: dict[str, list[tuple]] = {
    "A30": [("1g.6gb", 14, 4, "5.81", 14, 1, 0, 1, 0, 0),
            ("1g.6gb+me", 21, 1, "5.81", 14, 1, 0, 1, 1, 1),
            ("2g.12gb", 5, 2, "11.69", 28, 2, 0, 2, 0, 0),
            ("2g.12gb+me", 6, 1, "11.69", 28, 2, 0, 2, 1, 1),
            ("4g.24gb", 0, 1, "23.44", 56, 4, 0, 4, 1, 1)],
    "A100-40GB": [("1g.5gb", 19, 7, "4.75", 14, 0, 0, 1, 0, 0),
                  ("1g.5gb+me", 20, 1, "4.75", 14, 1, 0, 1, 1, 1),
                  ("1g.10gb", 15, 4, "9.75", 14, 1, 0, 1, 0, 0),
                  ("2g.10gb", 14, 3, "9.75", 28, 1, 0, 2, 0, 0),
                  ("3g.20gb", 9, 2, "19.62", 42, 2, 0, 3, 0, 0),
                  ("4g.20gb", 5, 1, "19.62", 56, 2, 0, 4, 0, 0),
                  ("7g.40gb", 0, 1, "39.38", 98, 5, 0, 7, 1, 1)],
    "A100-80GB": [("1g.10gb", 19, 7, "9.50", 14, 0, 0, 1, 0, 0),
                  ("1g.10gb+me", 20, 1, "9.50", 14, 1, 0, 1, 1, 1),
                  ("1g.20gb", 15, 4, "19.50", 14, 1, 0, 1, 0, 0),
                  ("2g.20gb", 14, 3, "19.50", 28, 1, 0, 2, 0, 0),
                  ("3g.40gb", 9, 2, "39.25", 42, 2, 0, 3, 0, 0),
                  ("4g.40gb", 5, 1, "39.25", 56, 2, 0, 4, 0, 0),
                  ("7g.80gb", 0, 1, "79.00", 98, 5, 0, 7, 1, 1)],
    "H100-80GB": _h100_like(["1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
                             "7g.80gb"], ["9.75", "9.75", "19.62", "19.62", "39.50", "39.50",
                                          "79.25"], [16, 16, 26, 32, 60, 64, 132]),
    "H100-PCIE": _h100_like(["1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb",
                             "7g.80gb"], ["9.75", "9.75", "19.62", "19.62", "39.50", "39.50",
                                          "79.25"], [14, 14, 14, 30, 46, 62, 114]),
    "H100-NVL": _h100_like(["1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb",
                            "7g.94gb"], ["10.75", "10.75", "21.62", "21.62", "46.38", "46.38",
                                         "93.12"], [16, 16, 26, 32, 60, 64, 132]),
    # mig-parted#120 (R550), with the 2-slice and 4-slice memory of a public R590 capture
    # (2g 33280 MiB = 32.50 GiB, 3g 71424 MiB = 69.75 GiB; issue 15, HAMi#1422)
    "H200": _h100_like(["1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb",
                        "7g.141gb"], ["16.00", "16.00", "32.50", "32.50", "69.75", "69.75",
                                      "139.75"], [16, 16, 26, 32, 60, 64, 132]),
    "B200": [("1g.23gb", 19, 7, "20.50", 18, None, None, 2, None, None),
             ("1g.23gb+me", 20, 1, "20.50", 18, None, None, 2, None, None),
             ("1g.45gb", 15, 4, "44.25", 30, None, None, 2, None, None),
             ("2g.45gb", 14, 3, "44.25", 36, 2, None, 4, None, None),
             ("3g.90gb", 9, 2, "89.00", 70, None, None, None, None, None),
             ("4g.90gb", 5, 1, "89.00", 72, None, None, None, None, None),
             ("7g.180gb", 0, 1, "178.50", 148, None, None, None, None, None)],
    "RTX-PRO-6000": [("1g.24gb", 14, 4, "23.62", 46, 1, 1, 1, 1, 0),
                     ("1g.24gb+me", 21, 1, "23.62", 46, 1, 1, 1, 1, 1),
                     ("1g.24gb+gfx", 47, 4, "23.62", 46, 1, 1, 1, 1, 0),
                     ("1g.24gb+me.all", 65, 1, "23.62", 46, 4, 4, 1, 4, 1),
                     ("1g.24gb-me", 67, 4, "23.62", 46, 0, 0, 1, 0, 0),
                     ("2g.48gb", 5, 2, "47.38", 94, 2, 2, 2, 2, 0),
                     ("2g.48gb+gfx", 35, 2, "47.38", 94, 2, 2, 2, 2, 0),
                     ("2g.48gb+me.all", 64, 1, "47.38", 94, 4, 4, 2, 4, 1),
                     ("2g.48gb-me", 66, 2, "47.38", 94, 0, 0, 2, 0, 0),
                     ("4g.96gb", 0, 1, "95.12", 188, 4, 4, 4, 4, 1),
                     ("4g.96gb+gfx", 32, 1, "95.12", 188, 4, 4, 4, 4, 1)],
}

LGIPP_8 = ["GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1",
           "GPU  0 Profile ID 20 Placements: {0,1,2,3,4,5,6}:1",
           "GPU  0 Profile ID 15 Placements: {0,2,4,6}:2",
           "GPU  0 Profile ID 14 Placements: {0,2,4}:2",
           "GPU  0 Profile ID  9 Placements: {0,4}:4",
           "GPU  0 Profile ID  5 Placement : {0}:4",
           "GPU  0 Profile ID  0 Placement : {0}:8"]
REFERENCE_LGIPP: dict[str, list[str]] = {
    **{m: LGIPP_8 for m in ("A100-40GB", "A100-80GB", "H100-80GB", "H100-PCIE", "H100-NVL",
                            "H200", "B200")},
    "A30": ["GPU  0 Profile ID 14 Placements: {0,1,2,3}:1",
            "GPU  0 Profile ID 21 Placements: {0,1,2,3}:1",
            "GPU  0 Profile ID  5 Placements: {0,2}:2",
            "GPU  0 Profile ID  6 Placements: {0,2}:2",
            "GPU  0 Profile ID  0 Placement : {0}:4"],
    "RTX-PRO-6000": [*[f"GPU  0 Profile ID {i} Placements: {{0,3,6,9}}:3"
                       for i in (14, 21, 47, 65, 67)],
                     *[f"GPU  0 Profile ID {i:>2} Placements: {{0,6}}:6" for i in (5, 35, 64, 66)],
                     "GPU  0 Profile ID  0 Placement : {0}:12",
                     "GPU  0 Profile ID 32 Placement : {0}:12"],
}


def _parse_lgip(text: str) -> list[tuple]:
    lines = [ln for ln in text.splitlines() if ln.startswith("|   0  MIG") or (
        ln.startswith("|    ") and ln.strip("| ").split() and ln.strip("| ")[0].isdigit())]
    rows = []
    for first, second in zip(lines[::2], lines[1::2], strict=True):
        f, s = first.strip("|").split(), second.strip("|").split()
        free, total = f[4].split("/")
        rows.append((f[2], int(f[3]), int(total), f[5], int(f[7]), int(f[8]), int(f[9]),
                     int(s[0]), int(s[1]), int(s[2]), int(free)))
    return rows


@pytest.mark.parametrize("model", sorted(REFERENCE_LGIP))
def test_lgip_equals_the_reference_capture(sim: SimFactory, model: str) -> None:
    nv, _ = sim(f"sim:{model}")
    nv.nvmlDeviceSetMigMode(nv.nvmlDeviceGetHandleByIndex(0), 1)
    rows = _parse_lgip(smi.lgip(nv))
    expected = REFERENCE_LGIP[model]
    assert [r[:3] for r in rows] == [e[:3] for e in expected]
    for row, ref in zip(rows, expected, strict=True):
        for got, want in zip(row[3:10], ref[3:], strict=True):
            if want is not None:
                assert got == want, (model, row[0], row[3:10], ref[3:])
        assert row[10] == row[2]  # empty GPU: Free == Total


@pytest.mark.parametrize("model", sorted(REFERENCE_LGIPP))
def test_lgipp_equals_the_reference_capture(sim: SimFactory, model: str) -> None:
    nv, _ = sim(f"sim:{model}")
    assert smi.lgipp(nv).splitlines() == REFERENCE_LGIPP[model]


# Real H100 80GB HBM3 output (nvidia-smi, MIG on, nothing created), as published in public
# setup notes with the same figures as the reference table (mig.md 2.5): layout, byte for byte.
H100_LGIP_HEAD = """\
+-------------------------------------------------------------------------------+
| GPU instance profiles:                                                        |
| GPU   Name               ID    Instances   Memory     P2P    SM    DEC   ENC  |
|                                Free/Total   GiB              CE    JPEG  OFA  |
|===============================================================================|
|   0  MIG 1g.10gb         19     7/7        9.75       No     16     1     0   |
|                                                               1     1     0   |
+-------------------------------------------------------------------------------+
|   0  MIG 1g.10gb+me      20     1/1        9.75       No     16     1     0   |
|                                                               1     1     1   |
+-------------------------------------------------------------------------------+"""
H100_LGIP_TAIL = """\
|   0  MIG 7g.80gb          0     1/1        79.25      No     132    7     0   |
|                                                               8     7     1   |
+-------------------------------------------------------------------------------+"""
# The same notes after `-cgi 9,14` and `-cci` on each GI.
H100_LGI = """\
+---------------------------------------------------------+
| GPU instances:                                          |
| GPU   Name               Profile  Instance   Placement  |
|                            ID       ID       Start:Size |
|=========================================================|
|   0  MIG 2g.20gb           14        3          0:2     |
+---------------------------------------------------------+
|   0  MIG 3g.40gb            9        2          4:4     |
+---------------------------------------------------------+"""
H100_LCI = """\
+--------------------------------------------------------------------+
| Compute instances:                                                 |
| GPU     GPU       Name             Profile   Instance   Placement  |
|       Instance                       ID        ID       Start:Size |
|         ID                                                         |
|====================================================================|
|   0      3       MIG 2g.20gb          1         0          0:2     |
+--------------------------------------------------------------------+
|   0      2       MIG 3g.40gb          2         0          0:4     |
+--------------------------------------------------------------------+"""
# RTX PRO 6000 row with the longest name (kubesimplify capture, driver 610.43.02).
RTX_ME_ALL = """\
|   0  MIG 1g.24gb+me.all  65     1/1        23.62      No     46     4     4   |
|                                                               1     4     1   |"""


def test_lgip_lgi_lci_layout_equal_real_captures_byte_for_byte(sim: SimFactory) -> None:
    nv, _ = sim("sim:H100-80GB")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    nv.nvmlDeviceSetMigMode(h, 1)
    table = smi.lgip(nv)
    assert table.startswith(H100_LGIP_HEAD) and table.endswith(H100_LGIP_TAIL)
    three, two = nv.nvmlDeviceCreateGpuInstance(h, 9), nv.nvmlDeviceCreateGpuInstance(h, 14)
    nv.nvmlGpuInstanceCreateComputeInstance(three, nv.NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE)
    nv.nvmlGpuInstanceCreateComputeInstance(two, nv.NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE)
    assert smi.lgi(nv) == H100_LGI
    assert smi.lci(nv) == H100_LCI


def test_rtx_pro_6000_long_profile_name_row(sim: SimFactory) -> None:
    nv, _ = sim("sim:RTX-PRO-6000")
    nv.nvmlDeviceSetMigMode(nv.nvmlDeviceGetHandleByIndex(0), 1)
    assert RTX_ME_ALL in smi.lgip(nv)


def test_list_gpus_and_no_mig_messages(sim: SimFactory) -> None:
    nv, _ = sim("sim:2xA30,L40S")
    lines = smi.list_gpus(nv).splitlines()
    assert [ln.split(" (UUID")[0] for ln in lines] == ["GPU 0: NVIDIA A30", "GPU 1: NVIDIA A30",
                                                       "GPU 2: NVIDIA L40S"]
    assert len({ln.split("UUID: ")[1] for ln in lines}) == 3
    assert smi.lgi(nv) == smi.NO_MIG == smi.lci(nv)
    assert "GPU  2" not in smi.lgipp(nv)  # the L40S has no MIG
