"""The Kubernetes manifests parse (PyYAML) and say what the recipe promises: a GPU each, reports on a volume."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT

K8S = ROOT / "deploy" / "kubernetes"


def load(name: str) -> dict:
    (doc,) = list(yaml.safe_load_all((K8S / name).read_text()))
    return doc


def pod_spec(doc: dict) -> dict:
    return doc["spec"]["template"]["spec"]


@pytest.mark.parametrize("name,kind", [("v100-doctor-job.yaml", "Job"), ("v100-doctor-daemonset.yaml", "DaemonSet")])
def test_manifest_requests_a_gpu_and_writes_reports_to_a_volume(name, kind):
    doc = load(name)
    assert doc["kind"] == kind and doc["apiVersion"] == ("batch/v1" if kind == "Job" else "apps/v1")
    spec = pod_spec(doc)
    (container,) = spec["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert mounts["reports"] == "/reports" and "persistentVolumeClaim" in volumes["reports"]
    command = " ".join(container["args"])
    assert "v100-doctor --no-probe --no-tui -o \"/reports/${NODE_NAME}.json\"" in command
    env = {e["name"]: e for e in container["env"]}
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    assert "utility" in env["NVIDIA_DRIVER_CAPABILITIES"]["value"]  # NVML inside the container


def test_job_never_restarts_and_daemonset_feeds_node_exporter():
    job = load("v100-doctor-job.yaml")
    assert pod_spec(job)["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] == 0
    ds = load("v100-doctor-daemonset.yaml")
    assert ds["spec"]["selector"]["matchLabels"] == ds["spec"]["template"]["metadata"]["labels"]
    spec = pod_spec(ds)
    assert "--prometheus /textfile/v100-doctor.prom" in " ".join(spec["containers"][0]["args"])
    assert spec["volumes"][1]["hostPath"]["path"] == "/var/lib/node_exporter/textfile_collector"
    assert any(t["key"] == "nvidia.com/gpu" for t in spec["tolerations"])
