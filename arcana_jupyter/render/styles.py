"""The one stylesheet of every arcana HTML view, inlined (no external fonts, images or files).

Colours are mid-tone and backgrounds translucent so the same CSS reads on light and dark themes;
text colour is inherited from the host (JupyterLab, VS Code, GitHub, the report).
"""

from __future__ import annotations

CSS = ("""
.arcana{font-family:var(--jp-ui-font-family,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif);font-size:13px;"""
"""line-height:1.45;color:inherit;max-width:100%}
.arcana *{box-sizing:border-box}
.arcana-reply{font-size:14px;margin:2px 0 6px 0}
.arcana-reply p{margin:0 0 .6em 0}
.arcana-reply h3,.arcana-reply h4,.arcana-reply h5,.arcana-reply h6{margin:.7em 0 .35em 0}
.arcana-reply blockquote{margin:.4em 0;padding:.1em .8em;border-left:3px solid rgba(127,127,127,.45);opacity:.9}
.arcana-reply table{border-collapse:collapse;margin:.5em 0;font-size:13px}
.arcana-reply th,.arcana-reply td{border:1px solid rgba(127,127,127,.35);padding:3px 9px}
.arcana-reply th{background:rgba(127,127,127,.1);font-weight:600}
.arcana-math{font-family:var(--jp-code-font-family,ui-monospace,SFMono-Regular,Menlo,Consolas,monospace);font-size:.92em;white-space:pre-wrap;color:#7d3c98}
.arcana-math-block{display:block;text-align:center;margin:.5em 0}
.arcana-link{text-decoration:underline dotted}
.arcana code{font-family:var(--jp-code-font-family,ui-monospace,SFMono-Regular,Menlo,Consolas,monospace);"""
"""font-size:.92em;background:rgba(127,127,127,.14);padding:0 .25em;border-radius:3px}
.arcana pre{white-space:pre-wrap;word-break:break-word;background:rgba(127,127,127,.09);"""
"""border:1px solid rgba(127,127,127,.22);border-radius:6px;padding:8px 10px;"""
"""margin:.4em 0;max-height:28em;overflow:auto}
.arcana pre code{background:none;padding:0}
.arcana-url{opacity:.7;font-size:.92em}
.arcana-error-box{border:1px solid rgba(208,73,63,.6);background:rgba(208,73,63,.1);border-radius:6px;"""
"""padding:6px 10px;margin:4px 0}
.arcana-meta{display:flex;flex-wrap:wrap;gap:4px 14px;opacity:.78;font-size:12px;margin:2px 0 4px 0}
.arcana-meta b{font-weight:600}
.arcana details.arcana-inspector{border:1px solid rgba(127,127,127,.3);border-radius:8px;margin:6px 0;"""
"""background:rgba(127,127,127,.035)}
.arcana details.arcana-inspector>summary{cursor:pointer;padding:5px 10px;font-size:12px;list-style:none;display:flex;"""
"""gap:12px;align-items:center;flex-wrap:wrap}
.arcana details.arcana-inspector>summary::-webkit-details-marker{display:none}
.arcana details.arcana-inspector>summary::before{content:"▸";display:inline-block;width:1em;opacity:.7}
.arcana details.arcana-inspector[open]>summary::before{content:"▾"}
.arcana-body{padding:4px 12px 10px 12px}
.arcana h4.arcana-h{font-size:12px;text-transform:uppercase;letter-spacing:.04em;opacity:.75;margin:12px 0 5px 0;"""
"""font-weight:600}
.arcana-bar{display:flex;height:14px;border-radius:4px;overflow:hidden;background:rgba(127,127,127,.16);"""
"""margin:3px 0 2px 0;width:100%}
.arcana-bar span{display:block;height:100%;min-width:1px}
.arcana-legend{display:flex;flex-wrap:wrap;gap:2px 12px;font-size:11.5px;opacity:.85;margin-bottom:4px}
.arcana-legend i{display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:4px;vertical-align:-1px}
.arcana-barlabel{font-size:11.5px;opacity:.75;margin-top:6px}
.arcana-table{border-collapse:collapse;width:100%;font-size:12px;margin:2px 0 4px 0}
.arcana-table th{text-align:left;font-weight:600;opacity:.8;border-bottom:1px solid rgba(127,127,127,.4);"""
"""padding:3px 6px;white-space:nowrap}
.arcana-table td{border-bottom:1px solid rgba(127,127,127,.16);padding:3px 6px;vertical-align:top}
.arcana-table td.nowrap{white-space:nowrap}
.arcana-table td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.arcana-table details summary{cursor:pointer;opacity:.85}
.arcana-table details pre{max-height:16em;font-size:11.5px}
.arcana-pill{display:inline-block;padding:0 6px;border-radius:9px;font-size:11px;line-height:17px;"""
"""border:1px solid rgba(127,127,127,.35);white-space:nowrap}
.arcana-kept{background:rgba(46,157,91,.18);border-color:rgba(46,157,91,.55)}
.arcana-compressed{background:rgba(214,154,31,.2);border-color:rgba(214,154,31,.6)}
.arcana-dropped{background:rgba(208,73,63,.18);border-color:rgba(208,73,63,.55)}
.arcana-summarized{background:rgba(125,91,214,.2);border-color:rgba(125,91,214,.55)}
.arcana-ok{background:rgba(46,157,91,.18);border-color:rgba(46,157,91,.55)}
.arcana-error,.arcana-cancelled{background:rgba(208,73,63,.18);border-color:rgba(208,73,63,.55)}
.arcana-running{background:rgba(58,123,213,.18);border-color:rgba(58,123,213,.55)}
.arcana-verified{background:rgba(46,157,91,.18);border-color:rgba(46,157,91,.55)}
.arcana-mismatch{background:rgba(208,73,63,.18);border-color:rgba(208,73,63,.55)}
.arcana-unknown{background:rgba(127,127,127,.15)}
.arcana-muted{opacity:.65}
.arcana-empty{opacity:.6;font-style:italic;font-size:12px}
.arcana-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:10px}
.arcana-card{border:1px solid rgba(127,127,127,.25);border-radius:6px;padding:6px 8px}
.arcana-card h5{margin:0 0 4px 0;font-size:12px}
.arcana-tier{font-size:12px;margin:2px 0}
.arcana-msg{border-left:3px solid rgba(127,127,127,.4);padding:2px 8px;margin:4px 0}
.arcana-msg-system{border-left-color:rgba(58,123,213,.7)}
.arcana-msg-user{border-left-color:rgba(46,157,91,.7)}
.arcana-msg-assistant{border-left-color:rgba(125,91,214,.7)}
.arcana-msg-tool{border-left-color:rgba(214,154,31,.7)}
.arcana-msg .arcana-role{font-size:11px;text-transform:uppercase;letter-spacing:.05em;opacity:.7}
.arcana-msg pre{margin:2px 0;max-height:14em}
.arcana-scrub{border:1px solid rgba(127,127,127,.3);border-radius:8px;padding:8px 12px;"""
"""background:rgba(127,127,127,.035)}
.arcana-scrub>input[type=radio]{position:absolute;opacity:0;width:1px;height:1px;margin:0;pointer-events:none}
.arcana-turns{display:flex;flex-wrap:wrap;gap:4px;align-items:center;margin:4px 0 8px 0}
.arcana-turns label{cursor:pointer;border:1px solid rgba(127,127,127,.4);border-radius:12px;padding:1px 9px;"""
"""font-size:12px;user-select:none}
.arcana-turns label:hover{background:rgba(127,127,127,.14)}
.arcana-track{flex:1 1 auto;height:4px;min-width:40px;border-radius:2px;background:rgba(127,127,127,.25)}
.arcana-frame{border-top:1px solid rgba(127,127,127,.25);padding-top:6px;margin-top:6px}
.arcana-side{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.arcana-chart svg{width:100%;height:auto;max-width:760px}
.arcana-chart text{fill:currentColor;font-size:11px}
.arcana-summary{display:flex;flex-wrap:wrap;gap:10px;margin:6px 0}
.arcana-stat{border:1px solid rgba(127,127,127,.3);border-radius:8px;padding:6px 12px;min-width:110px}
.arcana-stat b{display:block;font-size:18px}
.arcana-stat span{font-size:11.5px;opacity:.75}
""")

# Colours per outcome and per layer (used by bars, legends and the chart).
OUTCOME_COLORS = {
    "kept": "#2e9d5b",
    "compressed": "#d69a1f",
    "summarized": "#7d5bd6",
    "dropped": "#d0493f",
}
LAYER_COLORS = {
    "identity": "#3a7bd5",
    "task": "#1f9e9a",
    "working": "#7d5bd6",
    "external": "#d67a1f",
    "tools": "#8a8f98",
}


def style_block() -> str:
    """The stylesheet as a ``<style>`` element (each rendered output carries its own copy)."""
    return f"<style>{CSS}</style>"
