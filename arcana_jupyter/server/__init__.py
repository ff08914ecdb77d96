"""The Jupyter server extension: resolved traces for the trace viewer and the runs sidebar, no kernel needed.

Enabled by the wheel's ``etc/jupyter/jupyter_server_config.d/arcana_jupyter.json``
(``{"ServerApp": {"jpserver_extensions": {"arcana_jupyter.server": true}}}``), so it runs in the server
that serves JupyterLab and Notebook 7, with or without a kernel. It adds one endpoint,
``GET <base_url>/arcana/trace?path=P&what=run|turn|diff|turns[&agent=A][&turn=N][&a=N&b=M]``
``[&turns=N,M,...][&pairs=N:M,...]``, answered with a
``TraceReply`` (``schema/frontend.py``) about the ``.jsonl`` file ``P`` under the server's root
(:mod:`.handlers`), read by a child process bounded in memory and time (:mod:`.worker`). Settings:
``c.ArcanaTraceServer.max_bytes``, ``.max_seconds``, ``.max_memory_mb`` (:class:`.handlers.ArcanaTraceServer`).
"""

from __future__ import annotations

from typing import Any


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "arcana_jupyter.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from .handlers import load

    load(serverapp)
