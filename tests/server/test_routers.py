"""Replicas of `kiln serve` behind nginx with the configurations of deploy/nginx/: least connections
spreads concurrent requests over every replica, and the session hash keeps each session on one
replica, where its prefix cache serves the session's later requests. The oracle is each replica's
own /metrics (requests served, prefix-cache hits) and nginx, a router no one here wrote."""

from __future__ import annotations

import concurrent.futures
import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys

import httpx
import pytest

from conftest import API_KEY, MODEL_NAME, free_port, start_server, wait_healthy

DEPLOY = pathlib.Path(__file__).resolve().parents[2] / "deploy" / "nginx"
REPLICAS = 3
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if pathlib.Path("/usr/sbin/nginx").exists() else None)
if NGINX is None:
    pytest.fail("nginx is not installed (tools/install_dependencies.sh installs nginx-light)", pytrace=False)


@pytest.fixture(scope="module")
def replicas():
    servers = []
    try:
        for _ in range(REPLICAS):
            servers.append(start_server([]))
        yield servers
    finally:
        for s in servers:
            s.stop_gracefully()


class RouterProcess:
    """A router on a free loopback port, run as a child process."""

    def __init__(self):
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


class Router(RouterProcess):
    """nginx in the foreground, as an unprivileged process, with one file of deploy/nginx/ whose
    example addresses are replaced by the replicas' and a free port."""

    def __init__(self, conf: str, replicas, work: pathlib.Path):
        super().__init__()
        text = (DEPLOY / conf).read_text()
        assert "listen 127.0.0.1:8000;" in text
        text = text.replace("listen 127.0.0.1:8000;", f"listen 127.0.0.1:{self.port};")
        for i, replica in enumerate(replicas):
            example = f"server 127.0.0.1:{8001 + i};"
            assert example in text, f"{conf} has no line '{example}'"
            text = text.replace(example, f"server 127.0.0.1:{replica.port};")
        (work / "router.conf").write_text(text)
        for temp in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (work / temp).mkdir()
        (work / "nginx.conf").write_text(
            f"pid {work}/nginx.pid;\nerror_log {work}/error.log;\nevents {{}}\n"
            f"http {{\n  access_log off;\n  client_body_temp_path {work}/body;\n  proxy_temp_path {work}/proxy;\n"
            f"  fastcgi_temp_path {work}/fastcgi;\n  uwsgi_temp_path {work}/uwsgi;\n  scgi_temp_path {work}/scgi;\n"
            f"  include {work}/router.conf;\n}}\n")
        self.work = work
        self.proc = subprocess.Popen([NGINX, "-p", str(work), "-c", str(work / "nginx.conf"), "-g", "daemon off;"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        wait_healthy(self.url, self.proc, "nginx", lambda: self.proc.stdout.read().decode() + (
            (work / "error.log").read_text() if (work / "error.log").exists() else ""), timeout=30)


@pytest.fixture
def router(replicas, tmp_path):
    routers = []

    def make(conf: str) -> Router:
        (tmp_path / conf).mkdir()
        routers.append(Router(conf, replicas, tmp_path / conf))
        return routers[-1]

    yield make
    for r in routers:
        r.stop()


def counters(replica) -> dict[str, float]:
    """The replica's requests served and prefix-cache hits, summed over labels."""
    text = httpx.get(replica.url + "/metrics", timeout=10).text
    out = {}
    for name in ("kiln:request_success_total", "kiln:prefix_cache_hits_total"):
        out[name] = sum(float(v) for v in re.findall(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", text, re.M))
    return out


def complete(router: Router, prompt: str, session: str | None = None, max_tokens: int = 8) -> None:
    headers = {"Authorization": f"Bearer {API_KEY}"}
    if session is not None:
        headers["X-Session-ID"] = session
    r = httpx.post(router.url + "/v1/completions", headers=headers, timeout=120,
                   json={"model": MODEL_NAME, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0})
    assert r.status_code == 200, r.text


def session_prompt(tag: str, turn: int) -> str:
    """A prompt of a few hundred tokens that only this session starts with, then its turn."""
    shared = " ".join(f"{tag}-{i} mmap munmap fork" for i in range(40))
    return f"{shared}\nQ{turn}: What does it do?\nA:"


def served(before, after) -> list[float]:
    return [a["kiln:request_success_total"] - b["kiln:request_success_total"] for b, a in zip(before, after)]


def hits(before, after) -> float:
    return sum(a["kiln:prefix_cache_hits_total"] - b["kiln:prefix_cache_hits_total"] for b, a in zip(before, after))


def test_least_connections_spreads_concurrent_requests(replicas, router):
    r = router("kiln-least-conn.conf")
    before = [counters(s) for s in replicas]
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda i: complete(r, f"Q: What does call {i} do?\nA:", max_tokens=200), range(6)))
    per_replica = served(before, [counters(s) for s in replicas])
    assert sum(per_replica) == 6
    assert all(n >= 1 for n in per_replica), per_replica


def run_sessions(r: Router, replicas, tag: str, sessions: int = 4, turns: int = 3):
    """Each session's turns one after another; returns, per session, the requests each replica
    served, and the prefix-cache hits over all of them."""
    first = [counters(s) for s in replicas]
    placements = []
    for sid in range(sessions):
        before = [counters(s) for s in replicas]
        for turn in range(turns):
            complete(r, session_prompt(f"{tag}{sid}", turn), session=f"{tag}-session-{sid}")
        placements.append(served(before, [counters(s) for s in replicas]))
    return placements, hits(first, [counters(s) for s in replicas])


def test_the_session_hash_keeps_a_session_on_one_replica_and_its_cache_serves_it(replicas, router):
    hashed, hashed_hits = run_sessions(router("kiln-session-hash.conf"), replicas, "hash")
    for per_replica in hashed:
        assert sorted(per_replica) == [0, 0, 3], per_replica  # every turn on one replica
    spread, spread_hits = run_sessions(router("kiln-least-conn.conf"), replicas, "spread")
    # One at a time, least connections goes round the replicas: a session's turns land on
    # replicas that have not seen its prefix.
    assert any(max(per_replica) < 3 for per_replica in spread), spread
    assert hashed_hits >= 2 * max(spread_hits, 1), (hashed_hits, spread_hits)


SGLANG_ROUTER = importlib.util.find_spec("sglang_router") is not None


class SglangRouter(RouterProcess):
    """sglang-router (PyPI), an LLM router no one here wrote, with one routing policy in front of
    the replicas."""

    def __init__(self, policy: str, replicas, work: pathlib.Path):
        super().__init__()
        self.log = work / f"sglang-router-{policy}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sglang_router.launch_router", "--host", "127.0.0.1", "--port", str(self.port),
             "--prometheus-port", str(free_port()), "--policy", policy, "--log-level", "warn",
             "--worker-urls", *[r.url for r in replicas]],
            stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        wait_healthy(self.url, self.proc, "sglang-router", lambda: self.log.read_text()[-3000:])


@pytest.mark.skipif(not SGLANG_ROUTER, reason="sglang-router is not installed (pip install sglang-router)")
def test_a_cache_aware_router_sends_each_prefix_back_to_the_replica_that_cached_it(replicas, tmp_path):
    """sglang-router's cache_aware policy, from the requests' text alone: each session's turns
    stay on one replica, whose prefix cache serves them; its round_robin policy, on the same
    replicas, spreads them and the caches serve none."""
    aware = SglangRouter("cache_aware", replicas, tmp_path)
    try:
        placed, aware_hits = run_sessions(aware, replicas, "aware")
    finally:
        aware.stop()
    for per_replica in placed:
        assert sorted(per_replica) == [0, 0, 3], placed
    spread = SglangRouter("round_robin", replicas, tmp_path)
    try:
        placed, spread_hits = run_sessions(spread, replicas, "spread-rr")
    finally:
        spread.stop()
    assert all(max(per_replica) < 3 for per_replica in placed), placed
    assert aware_hits >= 2 * max(spread_hits, 1), (aware_hits, spread_hits)
