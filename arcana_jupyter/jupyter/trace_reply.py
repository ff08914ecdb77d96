"""The kernel's answer to a ``trace`` request: a run's trace as the viewer shows it, resolved here.

The turn widget asks it for a run open in this kernel (``comm.ArcanaComm.trace``), the replay widget for
its own run's file (``widget.replay_answer``): the same questions and answers as the Jupyter server
extension's ``/arcana/trace`` (``schema/frontend.py`` ``TraceRequest`` / ``TraceReply``), from the same
reader (:func:`arcana_jupyter.trace.views.answer`). The front end never gets the file's text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..schema.frontend import TraceRequest
from ..trace.views import TraceViews, answer
from .limits import MAX_TRACE_BYTES


def trace_answer(trace_file: Path, shown: str, content: dict[str, Any]) -> dict[str, Any]:  # JSON edge: the wire
    """The ``TraceReply`` (as JSON) to ``content`` about ``trace_file``, named
    ``shown`` in the answer (relative to the notebook's folder)."""
    if not trace_file.is_file():
        return {"type": "trace", "ok": False, "message": f"the trace {shown} is not there any more"}
    size = trace_file.stat().st_size
    if size > MAX_TRACE_BYTES:
        return {"type": "trace", "ok": False, "message": f"the trace {shown} is {size:,} bytes (more than "
                                                         f"{MAX_TRACE_BYTES:,} a kernel reads for a viewer): open "
                                                         "it in the trace viewer"}
    try:
        request = TraceRequest.model_validate(content)
    except ValidationError as exc:
        first = exc.errors()[0]
        return {"type": "trace", "ok": False,
                "message": f"a trace request: {first['msg']} at {'.'.join(map(str, first['loc']))}"}
    return answer(TraceViews(trace_file, shown=shown), request).model_dump(mode="json")
