"""A local two-node Ray cluster confined to the loopback interface, for the tests and benchmarks.

Ray advertises the machine's network address unless told otherwise, and `ray.init` turns
``127.0.0.1`` back into that address. Here every node is started with ``node_ip_address``
127.0.0.1 and, with ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, Ray takes the loopback address as
this machine's own, so the drivers connect to 127.0.0.1 too. The dashboard and usage
statistics are off. `listening_sockets` lets a test check what the cluster's processes bind.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import tokenmill

LOOPBACK = "127.0.0.1"
NODE_ARGS = {
    "num_cpus": 1,
    "object_store_memory": 80 * 2**20,
    "node_ip_address": LOOPBACK,
    "include_dashboard": False,
}
START_TIMEOUT_SECONDS = 120


def _confine_environment() -> None:
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # loopback is this machine's address
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    os.environ["RAY_NODE_IP_ADDRESS"] = LOOPBACK
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    # Workers import the tokenmill this process imported (a work tree or the installed one).
    package_root = str(Path(tokenmill.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH", "")
    if package_root not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, path) if p)


def start_loopback_cluster(nodes: int = 2, object_store_memory: int | None = None):
    """Starts the head and `nodes - 1` more nodes and connects this process; returns
    (cluster, ray)."""
    _confine_environment()
    import ray
    import ray._private.ray_constants as constants
    from ray.cluster_utils import Cluster

    constants.ENABLE_RAY_CLUSTER = False  # if ray was imported before the variable was set
    start = time.monotonic()
    node_args = dict(NODE_ARGS)
    if object_store_memory is not None:
        node_args["object_store_memory"] = object_store_memory
    cluster = Cluster(initialize_head=True, head_node_args=dict(node_args, dashboard_host=LOOPBACK))
    try:
        for _ in range(nodes - 1):
            cluster.add_node(**node_args)
        ray.init(address=cluster.address, logging_level="warning", include_dashboard=None)
        cluster.wait_for_nodes(timeout=START_TIMEOUT_SECONDS - (time.monotonic() - start))
    except BaseException:
        ray.shutdown()
        cluster.shutdown()
        raise
    return cluster, ray


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in found:
                found.add(child)
                frontier.append(child)
    return found


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def _address(hex_address: str) -> str:
    host = bytes.fromhex(hex_address.split(":")[0])
    if len(host) == 4:
        return socket.inet_ntop(socket.AF_INET, host[::-1])
    # /proc/net/tcp6 holds four little-endian 32-bit words.
    words = b"".join(host[i : i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def peak_memory() -> list[tuple[int, str, int]]:
    """(pid, name, peak resident bytes) of this process and every process it started."""
    found = []
    for pid in sorted(_descendants(os.getpid())):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if "VmHWM" in fields:
            found.append((pid, fields["Name"].strip(), int(fields["VmHWM"].split()[0]) * 1024))
    return found


def listening_sockets() -> list[tuple[int, str]]:
    """(pid, bound address) of every listening TCP socket of this process and the processes it
    started (the cluster's GCS, raylets, agents and workers). Linux only."""
    owners: dict[str, int] = {}
    for pid in _descendants(os.getpid()):
        for inode in _socket_inodes(pid):
            owners[inode] = pid
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in owners:  # 0A: LISTEN
                found.append((owners[fields[9]], _address(fields[1])))
    return found


def is_loopback(address: str) -> bool:
    return address in (LOOPBACK, "::1", "::ffff:127.0.0.1")
