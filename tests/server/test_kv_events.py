"""KV cache events over ZeroMQ, read as a KV-aware router reads vLLM's: a SUB socket on the
publishing endpoint, the payloads decoded by msgspec with vLLM's own event types, and the replay
socket for what the subscriber missed. The oracle for the content is
the server's own prefix cache: the blocks a subscriber believes cached (from the events alone,
matched by parent and tokens, so no knowledge of kiln's hash is needed) must predict exactly how
many prompt tokens the next request finds in the cache (/metrics), while the small cache evicts."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from typing import Any, Optional, Union

import cbor2
import httpx
import msgspec
import pytest
import zmq

from conftest import API_KEY, MODEL_NAME, KilnServer, free_port, kiln_binary, start_server, wait_healthy

BLOCK_SIZE = 16  # kiln's default KV block
NUM_KV_BLOCKS = 24
TOPIC = "kv-events"


# vLLM's event types as vLLM 0.28 puts them on the wire (vllm/distributed/kv_events.py): the
# batch an array, events maps tagged with their class name under "type", block hashes the 32-byte
# sha256_cbor names. Unknown fields are refused, so that a field kiln adds by mistake fails here.
class EventBatch(msgspec.Struct, array_like=True, omit_defaults=True, gc=False, forbid_unknown_fields=True):
    ts: float
    events: list[Any]
    data_parallel_rank: Optional[int] = None


class KVCacheEvent(msgspec.Struct, omit_defaults=True, gc=False, tag=True, forbid_unknown_fields=True):
    pass


class BlockStored(KVCacheEvent):
    block_hashes: list[bytes]
    parent_block_hash: Optional[bytes]
    token_ids: list[int]
    block_size: int
    lora_id: Optional[int]
    medium: Optional[str]
    lora_name: Optional[str]
    extra_keys: Optional[list[Optional[tuple[Any, ...]]]] = None
    group_idx: Optional[int] = None
    kv_cache_spec_kind: Optional[str] = None
    kv_cache_spec_sliding_window: Optional[int] = None


class BlockRemoved(KVCacheEvent):
    block_hashes: list[bytes]
    medium: Optional[str]
    group_idx: Optional[int] = None


class AllBlocksCleared(KVCacheEvent):
    pass


class KVEventBatch(EventBatch):
    events: list[Union[BlockStored, BlockRemoved, AllBlocksCleared]]


def sha256_cbor(value) -> bytes:
    """vLLM's sha256_cbor, with cbor2's canonical encoder: the independent oracle for the hashes."""
    return hashlib.sha256(cbor2.dumps(value, canonical=True)).digest()


# vLLM's NONE_HASH: the chain's root, from PYTHONHASHSEED ("0" is kiln's default, the routers' too).
ROOT_HASH = sha256_cbor(os.environ.get("PYTHONHASHSEED") or "0")


DECODER = msgspec.msgpack.Decoder(type=KVEventBatch)
END_SEQ = (-1).to_bytes(8, "big", signed=True)


@pytest.fixture(scope="module")
def publisher():
    """A server with a small KV cache that publishes its events, and the ports it publishes on."""
    pub, replay = free_port(), free_port()
    config = {"enable_kv_cache_events": True, "publisher": "zmq", "endpoint": f"tcp://*:{pub}",
              "replay_endpoint": f"tcp://*:{replay}", "topic": TOPIC}
    s = start_server(["--num-kv-blocks", str(NUM_KV_BLOCKS), "--kv-events-config", json.dumps(config)])
    yield s, pub, replay
    s.stop_gracefully()


class Subscriber:
    """Applies every batch, in sequence order, to its view of the replica's cache: hash -> (parent
    hash, tokens). A gap in the sequence is filled from the replay socket first."""

    def __init__(self, pub_port: int, replay_port: int):
        self.ctx = zmq.Context()
        self.sub = self.ctx.socket(zmq.SUB)
        self.sub.connect(f"tcp://127.0.0.1:{pub_port}")
        self.sub.setsockopt_string(zmq.SUBSCRIBE, TOPIC)
        self.replay_port = replay_port
        self.view: dict[bytes, tuple[Optional[bytes], list[int]]] = {}
        self.last_seq = -1
        self.replayed = 0
        self.cleared = 0
        self.removed = 0
        self.batches = 0

    def close(self) -> None:
        self.ctx.destroy(linger=0)

    def replay_from(self, first: int) -> list[tuple[int, bytes]]:
        # A DEALER socket, which takes every reply (a REQ socket would keep only the first), with
        # the empty delimiter frame a REQ socket adds by itself.
        req = self.ctx.socket(zmq.DEALER)
        req.connect(f"tcp://127.0.0.1:{self.replay_port}")
        req.send_multipart([b"", first.to_bytes(8, "big")])
        out = []
        try:
            while True:
                assert req.poll(10_000), "the replay socket did not answer"
                empty, seq_bytes, payload = req.recv_multipart()
                assert empty == b""
                if seq_bytes == END_SEQ:
                    assert payload == b""
                    return out
                out.append((int.from_bytes(seq_bytes, "big"), payload))
        finally:
            req.close(linger=0)

    def apply(self, seq: int, payload: bytes) -> None:
        if seq <= self.last_seq:
            return  # replayed already
        if seq > self.last_seq + 1:
            for missed_seq, missed in self.replay_from(self.last_seq + 1):
                if missed_seq < seq:
                    self.replayed += 1
                    self.apply(missed_seq, missed)
        assert seq == self.last_seq + 1, f"batch {seq} follows {self.last_seq}: the replay did not fill the gap"
        self.last_seq = seq
        batch = DECODER.decode(payload)
        assert abs(batch.ts - time.time()) < 600 and batch.data_parallel_rank == 0
        self.batches += 1
        for event in batch.events:
            if isinstance(event, AllBlocksCleared):
                self.view.clear()
                self.cleared += 1
            elif isinstance(event, BlockStored):
                assert event.block_size == BLOCK_SIZE and event.lora_id is None and event.lora_name is None
                assert event.medium == "GPU"
                assert len(event.token_ids) == BLOCK_SIZE * len(event.block_hashes)
                parent = event.parent_block_hash
                assert parent is None or parent in self.view, "stored under a parent the subscriber never saw"
                for i, h in enumerate(event.block_hashes):
                    assert h not in self.view, f"block {h.hex()} stored twice without a removal"
                    tokens = event.token_ids[i * BLOCK_SIZE:(i + 1) * BLOCK_SIZE]
                    assert h == sha256_cbor((parent or ROOT_HASH, tuple(tokens), None)), "not vLLM's sha256_cbor"
                    self.view[h] = (parent, tokens)
                    parent = h
            else:
                for h in event.block_hashes:
                    assert self.view.pop(h, None) is not None, f"block {h.hex()} removed but never stored"
                    self.removed += 1

    def drain(self, quiet_s: float = 0.5) -> int:
        """Applies what arrives until nothing has for quiet_s; returns how many batches."""
        n = 0
        while self.sub.poll(int(quiet_s * 1000)):
            topic, seq_bytes, payload = self.sub.recv_multipart()
            assert topic == TOPIC.encode()
            self.apply(int.from_bytes(seq_bytes, "big"), payload)
            n += 1
        return n

    def cached_prefix_tokens(self, prompt: list[int]) -> int:
        """Prompt tokens the replica will find cached, by this view: the longest run of the prompt's
        blocks, each stored under the previous one. The last prompt token is always computed."""
        by_content = {(parent, tuple(tokens)): h for h, (parent, tokens) in self.view.items()}
        parent, hits = None, 0
        while (hits + 1) * BLOCK_SIZE <= len(prompt) - 1:
            h = by_content.get((parent, tuple(prompt[hits * BLOCK_SIZE:(hits + 1) * BLOCK_SIZE])))
            if h is None:
                break
            parent, hits = h, hits + 1
        return hits * BLOCK_SIZE


def prefix_cache_hits(server) -> float:
    text = httpx.get(server.url + "/metrics", timeout=10).text
    return sum(float(v) for v in re.findall(r"^kiln:prefix_cache_hits_total(?:\{[^}]*\})? (\S+)$", text, re.M))


def complete(server, prompt: list[int], max_tokens: int = 1) -> None:
    r = httpx.post(server.url + "/v1/completions", headers={"Authorization": f"Bearer {API_KEY}"}, timeout=120,
                   json={"model": MODEL_NAME, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
                         "ignore_eos": True})
    assert r.status_code == 200, r.text


def test_events_predict_the_cache_hits_of_every_request(publisher):
    server, pub_port, replay_port = publisher
    sub = Subscriber(pub_port, replay_port)
    try:
        time.sleep(0.3)  # the SUB socket's subscription reaches the publisher
        # The start of the stream (the "all blocks cleared" of a fresh cache) went out before this
        # subscriber connected: it comes from the replay socket.
        for seq, payload in sub.replay_from(0):
            sub.apply(seq, payload)
        assert sub.cleared == 1 and sub.view == {}
        rng = random.Random(3)
        stems = [[rng.randrange(3, 400) for _ in range(5 * BLOCK_SIZE)] for _ in range(4)]
        checked_hits = 0
        for i in range(24):
            # Prompts of 5 to 9 blocks over four shared stems: prefixes repeat, diverge, and no
            # more than three fit the 24-block cache, so older ones are evicted.
            prompt = stems[rng.randrange(len(stems))][: rng.randrange(2, 6) * BLOCK_SIZE]
            prompt = prompt + [rng.randrange(3, 400) for _ in range(rng.randrange(3, 5) * BLOCK_SIZE + 7)]
            predicted = sub.cached_prefix_tokens(prompt)
            before = prefix_cache_hits(server)
            complete(server, prompt, max_tokens=1 + i % 3)
            assert prefix_cache_hits(server) - before == predicted, f"request {i}: the events predicted {predicted}"
            checked_hits += predicted
            sub.drain()
            # Every full block of the prompt is cached now, under the chain the view knows.
            assert sub.cached_prefix_tokens(prompt + [0]) == len(prompt) // BLOCK_SIZE * BLOCK_SIZE
        assert checked_hits > 0, "no request reused a cached prefix: the workload tests nothing"
        assert sub.removed > 0, "nothing was evicted: the workload tests nothing"
        assert len(sub.view) <= NUM_KV_BLOCKS
    finally:
        sub.close()


def test_a_subscriber_that_missed_batches_catches_up_by_replay(publisher):
    server, pub_port, replay_port = publisher
    early = Subscriber(pub_port, replay_port)
    try:
        time.sleep(0.3)
        for seq, payload in early.replay_from(0):
            early.apply(seq, payload)
        early.drain()
        for i in range(3):  # batches the late subscriber will not see live
            complete(server, [5 + i] * (3 * BLOCK_SIZE + 1))
        late = Subscriber(pub_port, replay_port)
        try:
            time.sleep(0.3)
            late.last_seq = early.last_seq  # it knew the stream up to here, then lost its connection
            late.view = dict(early.view)
            complete(server, [9] * (3 * BLOCK_SIZE + 1))  # the first batch it sees live shows the gap
            late.drain()
            early.drain()
            assert late.replayed >= 3
            assert late.last_seq == early.last_seq and late.view == early.view
        finally:
            late.close()
    finally:
        early.close()


def test_bad_kv_events_configs_are_refused_at_start():
    for config, expected in [('{"enable_kv_cache_events": true, "endpont": "tcp://*:1"}', "endpont"),
                             ('{"enable_kv_cache_events": true, "publisher": "kafka"}', "publisher"),
                             ('{"enable_kv_cache_events": true, "max_queue_size": 5}', "max_queue_size"),
                             ("[1]", "must be a JSON object")]:
        p = subprocess.run([kiln_binary(), "serve", "--port", "0", "--kv-events-config", config],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode != 0 and expected in p.stderr, p.stderr


def failed_start(args: list[str]) -> str:
    """The output of a `kiln serve` that must exit with an error once its model has loaded."""
    s = KilnServer(kiln_binary(), args)
    try:
        code = s.proc.wait(timeout=120)
    finally:
        s.kill()
    assert code != 0, s.log_tail()
    return s.log()


def test_an_endpoint_in_use_stops_the_server_with_its_address(publisher):
    _, pub_port, _ = publisher
    config = {"enable_kv_cache_events": True, "endpoint": f"tcp://*:{pub_port}"}
    log = failed_start(["--kv-events-config", json.dumps(config)])
    assert f"tcp://*:{pub_port}" in log and "Address already in use" in log, log[-3000:]


def test_events_without_a_prefix_cache_are_refused():
    config = {"enable_kv_cache_events": True, "endpoint": f"tcp://*:{free_port()}"}
    log = failed_start(["--no-prefix-caching", "--kv-events-config", json.dumps(config)])
    assert "enable_prefix_caching" in log, log[-3000:]


VLLM_ROUTER = shutil.which("vllm-router") or shutil.which("vllm-router", path=os.path.dirname(sys.executable))


@pytest.mark.skipif(VLLM_ROUTER is None, reason="vllm-router is not installed (pip install vllm-router)")
def test_vllm_routers_kv_aware_policy_sends_each_prompt_where_kilns_events_say_it_is_cached(tmp_path):
    """vllm-router's kv_aware policy, a consumer no one here wrote, subscribes to three replicas'
    events and routes each request to the replica whose cache holds its prefix. Each replica is
    first given its own prefix directly, past the router: only the events can tell the router."""
    replicas, ports = [], []
    router = None
    try:
        for _ in range(3):
            pub, replay = free_port(), free_port()
            config = {"enable_kv_cache_events": True, "endpoint": f"tcp://*:{pub}",
                      "replay_endpoint": f"tcp://*:{replay}"}
            s = KilnServer(kiln_binary(), ["--host", "127.0.0.1", "--port", "0", "--served-model-name", "m",
                                           "--kv-events-config", json.dumps(config)], own_args=True)
            replicas.append(s)
            ports.append((pub, replay))
        for s in replicas:
            s.wait_ready()
        port = free_port()
        cmd = [VLLM_ROUTER, "--host", "127.0.0.1", "--port", str(port), "--prometheus-port", str(free_port()),
               "--policy", "kv_aware", "--kv-event-model", "m", "--kv-event-block-size", str(BLOCK_SIZE),
               "--worker-urls", *[s.url for s in replicas]]
        for s, (pub, replay) in zip(replicas, ports):
            cmd += ["--kv-event-source", f"{s.url}=tcp://127.0.0.1:{pub}",
                    "--kv-event-replay-source", f"{s.url}=tcp://127.0.0.1:{replay}"]
        log = tmp_path / "router.log"
        router = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, router, "vllm-router", lambda: log.read_text()[-3000:])
        rng = random.Random(7)
        prefixes = [[rng.randrange(3, 4000) for _ in range(8 * BLOCK_SIZE)] for _ in replicas]
        for s, prefix in zip(replicas, prefixes):
            r = httpx.post(s.url + "/v1/completions", timeout=120,
                           json={"model": "m", "prompt": prefix + [1] * 5, "max_tokens": 1})
            assert r.status_code == 200, r.text
        time.sleep(1.0)  # the router's subscribers take the events in
        for g in (2, 0, 1, 1, 2):  # an order neither round-robin nor a fixed choice would match
            prefix = prefixes[g]
            before = [counters(s) for s in replicas]
            r = httpx.post(url + "/v1/completions", timeout=120,
                           json={"model": "m", "prompt": prefix + [2] * 5, "max_tokens": 1})
            assert r.status_code == 200, r.text
            after = [counters(s) for s in replicas]
            served = [a[0] - b[0] for a, b in zip(after, before)]
            hits = [a[1] - b[1] for a, b in zip(after, before)]
            assert served[g] == 1 and sum(served) == 1, f"prefix {g} went to {served}"
            assert hits[g] == len(prefix), hits
    finally:
        if router is not None:
            router.terminate()
            router.wait(timeout=30)
        for s in replicas:
            s.stop_gracefully()


def counters(server) -> tuple[float, float]:
    """The replica's requests served and prefix-cache hits."""
    text = httpx.get(server.url + "/metrics", timeout=10).text
    return tuple(sum(float(v) for v in re.findall(rf"^kiln:{name}(?:\{{[^}}]*\}})? (\S+)$", text, re.M))
                 for name in ("request_success_total", "prefix_cache_hits_total"))
