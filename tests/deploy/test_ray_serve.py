"""kiln on Ray Serve (deploy/ray/kiln_deployment.py) on a local Ray cluster (PyPI `ray[serve]`):
two replicas of the Python ContinuousBatchingPipeline answer concurrent requests, whole or
streamed, with `kiln run`'s greedy text, a bad field is a 400 naming it, and autoscaling on the
queue adds a replica under load. Ray Serve's own router and autoscaler are the oracle for the
placement: the replicas report which one answered."""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
import sys
import time

import httpx
import pytest

from conftest import free_port

ray = pytest.importorskip("ray")
from ray import serve  # noqa: E402

SOURCE = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = SOURCE / "deploy" / "ray"
MODEL_DIR = SOURCE / "models" / "kiln-tiny"
PROMPTS = [f"Q: What does {name} do?\nA:" for name in ("mmap", "fork", "read", "write", "open", "close")]


@pytest.fixture(scope="module")
def ray_serve_url():
    # The replicas import kiln (the build tree's, on PYTHONPATH) and the deployment's module.
    path = os.pathsep.join([str(DEPLOY), os.environ.get("PYTHONPATH", "")])
    sys.path.insert(0, str(DEPLOY))
    # Serve kills a proxy that is not ready within 5 s and a replica that misses a 10 s health
    # check; on a busy 2-core machine a Python worker can take longer to start. The controller
    # and the proxy inherit these from this process.
    slow_start = {"RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S": "60", "RAY_SERVE_PROXY_HEALTH_CHECK_TIMEOUT_S": "60"}
    os.environ.update(slow_start)
    # Three CPUs: the two replicas, and the autoscaler's second one (each takes one).
    ray.init(num_cpus=3, include_dashboard=False, object_store_memory=100 * 2**20, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path, "KILN_LOG_LEVEL": "error", **slow_start}})
    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        serve.shutdown()
        ray.shutdown()
        sys.path.remove(str(DEPLOY))


def post(url: str, body: dict, timeout: float = 120) -> httpx.Response:
    return httpx.post(url, json=body, timeout=timeout)


def test_two_replicas_answer_with_kiln_runs_greedy_text(ray_serve_url, kiln_cli):
    from kiln_deployment import KilnDeployment

    # At most three requests in a replica at once: twelve at a time must use both.
    app = KilnDeployment.options(num_replicas=2, autoscaling_config=None, max_ongoing_requests=3,
                                 ray_actor_options={"num_cpus": 1})
    serve.run(app.bind(str(MODEL_DIR)), name="fixed", route_prefix="/fixed")
    url = ray_serve_url + "/fixed"
    body = {"max_new_tokens": 200, "apply_chat_template": False, "ignore_eos": True}
    with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(pool.map(lambda p: post(url, {"prompt": p, **body}), PROMPTS * 2))
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    for prompt, answer in zip(PROMPTS * 2, answers):
        assert answer.json()["text"] == kiln_cli.greedy(prompt, 200)
        assert answer.json()["finish_reason"] == "LENGTH" and len(answer.json()["token_ids"]) == 200
    assert len({a.json()["replica"] for a in answers}) == 2  # both replicas served

    with httpx.stream("POST", url, json={"prompt": PROMPTS[0], "stream": True, **body}, timeout=120) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
        chunks = list(r.iter_text())
    assert "".join(chunks) == kiln_cli.greedy(PROMPTS[0], 200)

    bad = post(url, {"prompt": "x", "top_p": 3.0, "do_sample": True})
    assert bad.status_code == 400 and "top_p" in bad.json()["error"]
    unknown = post(url, {"prompt": "x", "no_such_field": 1})
    assert unknown.status_code == 400 and "no_such_field" in unknown.json()["error"]
    serve.delete("fixed")


def running_replicas(app: str) -> int:
    deployment = serve.status().applications[app].deployments["KilnDeployment"]
    return deployment.replica_states.get("RUNNING", 0)


def test_a_queue_makes_the_autoscaler_add_a_replica(ray_serve_url):
    from kiln_deployment import KilnDeployment

    autoscaling = {"min_replicas": 1, "max_replicas": 2, "target_ongoing_requests": 2, "upscale_delay_s": 0,
                   "look_back_period_s": 1, "metrics_interval_s": 0.5, "downscale_delay_s": 600}
    app = KilnDeployment.options(autoscaling_config=autoscaling, ray_actor_options={"num_cpus": 1})
    serve.run(app.bind(str(MODEL_DIR), "REFERENCE"), name="scaling", route_prefix="/scaling")
    assert running_replicas("scaling") == 1
    url = ray_serve_url + "/scaling"
    # On the scalar REFERENCE device these take seconds on an idle machine, and minutes on a busy one.
    long = {"max_new_tokens": 200, "ignore_eos": True, "apply_chat_template": False}
    deadline = time.monotonic() + 240  # a new replica starts a Python worker and loads the model
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        pending = [pool.submit(post, url, {"prompt": p, **long}, 600) for p in PROMPTS + PROMPTS[:2]]
        while running_replicas("scaling") < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        scaled = running_replicas("scaling")
        for f in pending:
            assert f.result().status_code == 200
    assert scaled == 2
    serve.delete("scaling")
