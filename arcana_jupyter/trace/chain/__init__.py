"""Chained decisions (trace encoding 2, what the runtime writes): each decision against the previous one
of its agent (``metadata.chain``, docs/TRACE_FORMAT.md "Chained decisions").

A keyframe every few decisions holds every history row, and a delta against a distant keyframe
grows with the distance to it (encoding 1, :mod:`..keyframes`): bytes per turn grew with the run.
Encoding 2 chains each decision to the previous one of its agent::

    "decision": {..., "decisions": null},
    "chain": {"v": 2, "prev": "e_000123" | null,
              "same": ["tools", "builder", "inputs.pins", ...],   # copied from the previous decision
              "overflow": {"checkpoint": [[1, 187]]},            # inputs.overflow as runs, when not "same"
              "patch": {"budget": {"used": [6868]}, ...},        # decision/report/budget patched (make_patch)
              "sections": [{"e": 0, "content": [[0, 3], "…\\n"]}, {"p": [1, 2]}],  # encode_sections
              "moved": [[1, 3, "system", 0], ...],               # shape.moved as runs
              "rows": {"count": 573, "keys": ["index", "role", ...],      # keys: in keyframes only
                       "align": [[0, 567, 0], [569, 4, 567]],     # [start, length, start in the previous]
                       "columns": {"outcome": [["s", [33, 7, 480], [["k", ["kept", "dropped"], "010"]]], 41],
                                   ...}}}

A column is a list of ops, in order: an int ``n`` copies n values from the previous decision's
aligned rows; ``["v", x, ...]`` literal values; ``["r", n, x]`` x repeated; ``["a", n, first, step]``
an arithmetic run of ints; ``["d", n, k]`` the aligned previous values plus k (ints); ``["k", table,
[i, ...]]`` the values table[i] (strings that repeat; the indexes a string of digits for a table of
at most ten values); ``["q", [k, ...]]``
the numbers k/10000 (relevance scores, rounded to four decimals); ``["qd", [d, ...]]`` the numbers
(k + d)/10000 where k/10000 is the aligned previous value; ``["qn", [e, ...]]`` null for null, else
the aligned previous value plus e/10000 where it is a number, e/10000 where it is not; ``["n", "0110",
ops]`` null for each 0, for each 1 the next of ``ops``' values; ``["s", [gap,
...], ops]`` a sparse op: per gap, gap values copied then one value, the values those ``ops`` decode to
(against the previous values at the positions written). A column may instead be ``[["m", ref, ops]]``:
the previous values, except where the earlier column ``ref`` did not copy (there: ``ops``' values), or
``[["m", ref, ops, rest]]``: and where ``ref`` copied, ``rest``'s values (ops of those positions, in
order). A delta's ``keys`` are its previous decision's: left out.
``prev`` null is a keyframe (no copies, no aligned rows): written when the chain since the last one
holds three times a keyframe's bytes, so keyframes cost at most a third of what the deltas between
them cost. ``prev`` is always the previous decision of the agent (the one-pass readers keep only the
last decisions decoded; a ``prev`` further back would make them walk back to a keyframe).

What a record costs since issue 26 (docs/TRACE_FORMAT.md "Bytes per turn"): what changed, as far as
the encoder can see it — metadata that moved a little as patches (``make_patch``), the adaptive
sections as line edits of the previous decision's (``encode_sections``, the line edits of
trace/prompt_sent.py), a shape whose ``moved`` alone changed in ``same``, rows other than history
messages whose tokens changed left unaligned (``_unalign_changed``: the recall churn's columns then
mask on the outcome's changes), a keyframe's string columns as value tables (``_table_op``).

The modules, one idea each: :mod:`.columns` (a column as ops and back), :mod:`.align` (which previous
rows the new ones continue), :mod:`.patch` (a JSON value as a patch of an earlier one),
:mod:`.metadata` (the metadata against the previous decision's), :mod:`.encoder` (writing: the
runtime's :class:`~.encoder.ChainEncoder`) and :mod:`.resolver` (reading: :class:`~.resolver.ChainResolver`).
Importers outside trace/ use the façade, trace/decision_delta.py.
"""
