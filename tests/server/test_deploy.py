"""The Kubernetes manifests of deploy/kubernetes/, checked as far as a machine without a cluster
allows: every object against the Kubernetes API's own schemas (kubernetes-validate, strict), and
the Deployment's container arguments run as they are by `kiln serve` (paths mapped to this
machine), whose /health must answer the probes and whose /metrics must carry what the
autoscalers query."""

from __future__ import annotations

import pathlib
import re

import httpx
import kubernetes_validate
import yaml

from conftest import KilnServer, kiln_binary

SOURCE = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = SOURCE / "deploy" / "kubernetes"
KUBERNETES_VERSION = "1.37.0"


def documents() -> list[dict]:
    docs = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def one(kind: str) -> dict:
    found = [d for d in documents() if d["kind"] == kind]
    assert len(found) == 1, f"{kind}: {len(found)} objects"
    return found[0]


def test_every_object_passes_the_kubernetes_schemas():
    checked = 0
    for doc in documents():
        if doc["apiVersion"].startswith("keda.sh/"):
            continue  # a custom resource: the API server's schemas do not have it (checked below)
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        checked += 1
    assert checked >= 5


def test_the_objects_refer_to_each_other():
    deployment, service = one("Deployment"), one("Service")
    pod = deployment["spec"]["template"]
    container = pod["spec"]["containers"][0]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    port_names = {p["name"] for p in container["ports"]}
    assert service["spec"]["ports"][0]["targetPort"] in port_names
    claims = {d["metadata"]["name"] for d in documents() if d["kind"] == "PersistentVolumeClaim"}
    for volume in pod["spec"]["volumes"]:
        if "persistentVolumeClaim" in volume:
            assert volume["persistentVolumeClaim"]["claimName"] in claims
    for scaler in (one("ScaledObject"), one("HorizontalPodAutoscaler")):
        assert scaler["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    # SIGTERM drains for --drain-timeout; Kubernetes must not kill the pod before that ends.
    drain = next(int(a.split("=")[1]) for a in container["args"] if a.startswith("--drain-timeout="))
    assert pod["spec"]["terminationGracePeriodSeconds"] > drain


def test_the_deployment_runs_the_dockerfiles_image_as_built():
    """The pod gives `args` and no `command`, so the image's ENTRYPOINT (kiln) runs them, and the
    port it serves on is the one the image exposes (the container test builds and runs it)."""
    dockerfile = (SOURCE / "Dockerfile").read_text()
    final_stage = dockerfile.rsplit("\nFROM ", 1)[1]
    assert re.search(r'^ENTRYPOINT \["kiln"\]$', final_stage, re.M)
    container = one("Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert "command" not in container
    exposed = {int(p) for p in re.findall(r"^EXPOSE (\d+)$", final_stage, re.M)}
    assert {p["containerPort"] for p in container["ports"]} <= exposed
    # The pod runs as the image's own user, so the cache it warmed and the volume are its own.
    uid = re.search(r"useradd .*--uid (\d+)", final_stage)
    assert re.search(r"^USER kiln$", final_stage, re.M) and uid
    security = one("Deployment")["spec"]["template"]["spec"]["securityContext"]
    assert security["runAsUser"] == security["fsGroup"] == int(uid.group(1)) and security["runAsNonRoot"]


def mapped_args(container: dict, tmp_path: pathlib.Path) -> list[str]:
    """The container's `kiln serve` arguments with its paths on this machine: the model volume
    holds the embedded model under the manifest's directory name, so the served model name (the
    directory's) is the one the autoscalers' query names."""
    args = container["args"]
    assert args[0] == "serve"
    models, cache, secrets = tmp_path / "models", tmp_path / "cache", tmp_path / "secrets"
    models.mkdir()
    cache.mkdir()
    secrets.mkdir()
    model_arg = next(a for a in args if a.startswith("--model="))
    (models / pathlib.PurePosixPath(model_arg.split("=", 1)[1]).name).symlink_to(SOURCE / "models" / "kiln-tiny")
    (secrets / "api-key").write_text("deploy-test-key\n")
    out = []
    for a in args[1:]:
        a = a.replace("=/models/", f"={models}/").replace("=/cache", f"={cache}").replace("=/secrets/", f"={secrets}/")
        if a.startswith("--host="):
            a = "--host=127.0.0.1"  # the pod listens on all interfaces; a test never does
        if a.startswith("--port="):
            a = "--port=0"
        out.append(a)
    return out


def test_the_container_serves_as_the_probes_and_autoscalers_expect(tmp_path):
    deployment = one("Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    server = KilnServer(kiln_binary(), mapped_args(container, tmp_path), own_args=True)
    try:
        server.wait_ready()  # /health answers 200
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            path = container[probe]["httpGet"]["path"]
            assert httpx.get(server.url + path, timeout=10).status_code == 200, probe
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        assert int(annotations["prometheus.io/port"]) == container["ports"][0]["containerPort"]
        metrics = httpx.get(server.url + annotations["prometheus.io/path"], timeout=10).text
        query = one("ScaledObject")["spec"]["triggers"][0]["metadata"]["query"]
        name, labels = re.search(r"(kiln:\w+)\{([^}]*)\}", query).groups()
        assert re.search(rf"^{re.escape(name)}\{{{re.escape(labels)}\}} ", metrics, re.M), (query, metrics)
        # prometheus-adapter exposes kiln:X as kiln_X, the name the HorizontalPodAutoscaler reads.
        hpa_metric = one("HorizontalPodAutoscaler")["spec"]["metrics"][0]["pods"]["metric"]["name"]
        assert hpa_metric == name.replace(":", "_")
        # The API key comes from the mounted secret.
        unauthorised = httpx.get(server.url + "/v1/models", timeout=10)
        authorised = httpx.get(server.url + "/v1/models", headers={"Authorization": "Bearer deploy-test-key"}, timeout=10)
        assert (unauthorised.status_code, authorised.status_code) == (401, 200)
        # CACHE_DIR on its volume holds the compiled model for the next pod's warm start.
        assert any((tmp_path / "cache").iterdir())
    finally:
        server.stop_gracefully()
