/** The page's only style sheet, allowed by its hash in the page's CSP (no style attributes). */
export const GALLERY_STYLE = `
:root{color-scheme:light dark;--bg:#f6f6f4;--card:#fff;--ink:#1d1d1f;--muted:#666;--line:#ddd;--bad:#b3261e;--ok:#1b6e33;--warn:#8a5a00}
@media (prefers-color-scheme:dark){:root{--bg:#161618;--card:#222226;--ink:#eee;--muted:#aaa;--line:#3a3a3f;--bad:#ff8a80;--ok:#7bd88f;--warn:#ffcc66}}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;background:var(--bg);color:var(--ink)}
header.page{padding:1.2em 1.5em .4em}h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.2em 0 .5em}
.muted,.generated{color:var(--muted)}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em}
.totals{display:flex;flex-wrap:wrap;gap:.5em 1.4em;margin:.6em 0;padding:0;list-style:none}.totals b{font-variant-numeric:tabular-nums}
.toolbar{display:flex;flex-wrap:wrap;gap:.6em 1.2em;align-items:center;padding:.6em 1.5em;border-block:1px solid var(--line);background:var(--card);position:sticky;top:0;z-index:1}
.toolbar label{display:flex;gap:.4em;align-items:center}select,button{font:inherit}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:1em;padding:1em 1.5em}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:.8em;display:flex;flex-direction:column;gap:.45em;min-width:0}
.card[hidden]{display:none}.card.problem{border-color:var(--bad);border-width:2px}
.card-head{display:flex;justify-content:space-between;gap:.5em;align-items:baseline}.card-head code{overflow-wrap:anywhere}
.badge{font-size:.8em;padding:.1em .5em;border-radius:99px;border:1px solid currentColor;white-space:nowrap}
.state-done .badge{color:var(--ok)}.state-failed .badge,.state-expired .badge,.state-budget_exceeded .badge{color:var(--bad)}.state-in_flight .badge,.state-pending .badge{color:var(--warn)}
.error{color:var(--bad);margin:0;overflow-wrap:anywhere}
video{width:100%;border-radius:6px;background:#000;display:block}.take.earlier video{width:60%}
.take-meta{margin:.2em 0 0;font-size:.85em;color:var(--muted)}
.prompt{margin:0;overflow-wrap:anywhere}.params{display:flex;flex-wrap:wrap;gap:.3em;margin:0;padding:0;list-style:none}
.params li{font-size:.8em;border:1px solid var(--line);border-radius:4px;padding:0 .4em}.params li.axis{border-color:var(--ok)}
.facts{font-size:.85em;color:var(--muted);margin:0}.redo{margin-top:auto;font-size:.9em}
.redo-panel{position:sticky;bottom:0;background:var(--card);border-top:1px solid var(--line);padding:.7em 1.5em;display:flex;flex-wrap:wrap;gap:.6em;align-items:center}
.redo-panel code{flex:1 1 30em;padding:.35em .6em;border:1px solid var(--line);border-radius:6px;user-select:all;overflow-wrap:anywhere}
.redo-panel a[aria-disabled=true]{pointer-events:none;opacity:.5}
.expiry{color:var(--warn);margin:.3em 0}.warning{background:#fff4d6;color:#5a3d00;border:1px solid #e0b84c;padding:.4em .8em;margin:.3em 0}
details.history{padding:0 1.5em 5em}table{border-collapse:collapse}th,td{border:1px solid var(--line);padding:.25em .5em;text-align:left;vertical-align:top}
`;
