"""Metrics of a process that serves no HTTP (``payorch worker``): a tiny exporter on its own port.

``start_worker_exporter()`` reads ``PAYORCH_WORKER_METRICS_PORT``; unset, it does nothing.
Meant to be called once at the start of ``payorch worker`` (see docs/deployment.md). With
PROMETHEUS_MULTIPROC_DIR set, the worker's metrics are also aggregated by the API's /metrics on
the same host, and the exporter is not needed there.
"""

from __future__ import annotations

import logging
import os

from prometheus_client import REGISTRY, CollectorRegistry, start_http_server

from payorch.observability.metrics import multiprocess_dir

log = logging.getLogger("payorch.observability")
PORT_VARIABLE = "PAYORCH_WORKER_METRICS_PORT"


def start_worker_exporter(host: str = "127.0.0.1") -> int | None:
    """Serve /metrics of this process on the configured port, bound to ``host`` (loopback unless
    PAYORCH_METRICS_HOST says otherwise); the port, or None when unset."""
    value = os.environ.get(PORT_VARIABLE, "").strip()
    if not value:
        return None
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise ValueError(f"{PORT_VARIABLE}: must be a TCP port number")
    registry: CollectorRegistry = REGISTRY
    if multiprocess_dir():
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    server, _thread = start_http_server(int(value), addr=host, registry=registry)
    port = int(server.server_port)
    log.info("worker metrics on http://%s:%d/metrics", host, port)
    return port
