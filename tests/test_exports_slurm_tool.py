"""Real tool check: Slurm's slurmctld reads the exported topology.conf (topology/tree) and
``scontrol show topology`` lists exactly the exported switches and nodes.

Needs Debian's ``slurmctld``, ``slurm-client`` and ``munge`` (``.ci/run`` installs them and
sets ``SUPERNODE_REQUIRE_TOOLS=1``, so CI fails rather than skips when they are missing).
Nodes are declared ``State=FUTURE`` (no slurmd), ports are private, everything lives in a
temporary folder.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.scaling import scale_cluster
from supernode.exports import export_files
from supernode.exports.hostlist import compress, expand

TOOLS = ("slurmctld", "scontrol", "munged")


def _require_tools() -> None:
    missing = [t for t in TOOLS if shutil.which(t) is None and
               not Path(f"/usr/sbin/{t}").exists()]
    if not missing:
        return
    message = f"Slurm tools missing: {', '.join(missing)} (apt-get install slurmctld " \
              "slurm-client munge)"
    if os.environ.get("SUPERNODE_REQUIRE_TOOLS") == "1":
        pytest.fail(message)
    pytest.skip(message)


def _tool(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def _free_ports(count: int) -> list[int]:
    socks, ports = [], []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def _start_munge(folder: Path) -> Path:
    munge = folder / "munge"
    munge.mkdir(mode=0o700)
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    sock = munge / "munge.socket"
    subprocess.run([_tool("munged"), "--force", f"--socket={sock}", f"--key-file={key}",
                    f"--log-file={munge / 'munged.log'}", f"--pid-file={munge / 'munged.pid'}",
                    f"--seed-file={munge / 'munged.seed'}"], check=True, timeout=30)
    return sock


def _slurm_conf(folder: Path, nodes: list[str], sock: Path) -> Path:
    ctld, slurmd = _free_ports(2)
    conf = folder / "slurm.conf"
    (folder / "state").mkdir()
    conf.write_text("\n".join([
        "ClusterName=supernodetest", "SlurmctldHost=localhost",
        f"SlurmctldPort={ctld}", f"SlurmdPort={slurmd}",
        "AuthType=auth/munge", f"AuthInfo=socket={sock}", "CredType=cred/munge",
        f"SlurmUser={getpass.getuser()}", f"StateSaveLocation={folder / 'state'}",
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
        f"SlurmctldLogFile={folder / 'slurmctld.log'}",
        "TopologyPlugin=topology/tree", "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core", "ProctrackType=proctrack/linuxproc",
        "MpiDefault=none", "ReturnToService=2",
        f"NodeName={compress(nodes)} CPUs=1 State=FUTURE",
        "PartitionName=all Nodes=ALL Default=YES State=UP", ""]))
    return conf


def _show_topology(conf: Path, env: dict) -> str:
    deadline = time.monotonic() + 60
    last = ""
    while time.monotonic() < deadline:
        done = subprocess.run([_tool("scontrol"), "show", "topology"], env=env,
                              capture_output=True, text=True, timeout=30)
        if done.returncode == 0 and "SwitchName=" in done.stdout:
            return done.stdout
        last = done.stderr
        time.sleep(0.5)
    log = (conf.parent / "slurmctld.log")
    raise AssertionError(f"scontrol never answered: {last}\n"
                         f"{log.read_text() if log.exists() else ''}")


def parse_scontrol_topology(text: str) -> dict[str, dict]:
    """``{switch: {"level", "nodes", "switches"}}`` from ``scontrol show topology``."""
    out = {}
    for line in text.split("\n"):
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "SwitchName" not in fields:
            continue
        out[fields["SwitchName"]] = {
            "level": int(fields.get("Level", -1)),
            "nodes": set(expand(fields.get("Nodes", ""))),
            "switches": set(expand(fields.get("Switches", ""))),
        }
    return out


@pytest.mark.parametrize("preset, gpus", [("gb200-nvl72-superpod", None),
                                          ("dgx-h100-superpod-su", 4096)])
def test_slurmctld_lists_exactly_the_exported_tree(preset, gpus, tmp_path):
    _require_tools()
    cluster = scale_cluster(load_cluster_spec(preset), gpus).cluster
    result = export_files(cluster, ["slurm-tree"])
    model = result.model
    (tmp_path / "topology.conf").write_text(result.files["slurm-tree"]["topology.conf"])
    sock = _start_munge(tmp_path)
    conf = _slurm_conf(tmp_path, list(model.nodes), sock)
    env = {**os.environ, "SLURM_CONF": str(conf)}
    ctld = subprocess.Popen([_tool("slurmctld"), "-D", "-f", str(conf)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        shown = parse_scontrol_topology(_show_topology(conf, env))
    finally:
        ctld.terminate()
        ctld.wait(timeout=30)
        subprocess.run([_tool("munged"), "--stop", f"--socket={sock}"], timeout=30,
                       capture_output=True)
    exported = {sw.name: sw for sw in model.tree()}
    assert set(shown) == set(exported)
    below: dict[str, set[str]] = {}
    for sw in sorted(exported.values(), key=lambda s: s.level):
        below[sw.name] = set(sw.nodes).union(*(below[c] for c in sw.children))
        assert shown[sw.name]["level"] == sw.level
        assert shown[sw.name]["switches"] == set(sw.children)
        assert shown[sw.name]["nodes"] == below[sw.name]
    top = max(exported.values(), key=lambda s: s.level)
    assert below[top.name] == set(model.nodes)
    assert len(model.nodes) == cluster.hosts
