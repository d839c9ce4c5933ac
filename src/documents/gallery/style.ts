/**
 * The page's only style sheet, allowed by its hash in the page's CSP (no style attributes). A tile's
 * frame is 16:9, the rows' one height; the video in it keeps its own shape (9:16, 1:1, 16:9), as
 * tall as the frame and centred, never cropped (docs/gallery.md).
 */
export const GALLERY_STYLE = `
:root{color-scheme:light dark;--bg:#f6f6f4;--card:#fff;--ink:#1d1d1f;--muted:#666;--line:#ddd;--bad:#b3261e;--ok:#1b6e33;--warn:#8a5a00}
@media (prefers-color-scheme:dark){:root{--bg:#161618;--card:#222226;--ink:#eee;--muted:#aaa;--line:#3a3a3f;--bad:#ff8a80;--ok:#7bd88f;--warn:#ffcc66}}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;background:var(--bg);color:var(--ink)}
header.page{padding:1.2em 1.5em .4em}h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.2em 0 .5em}
.muted,.generated{color:var(--muted)}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em}
.totals{display:flex;flex-wrap:wrap;gap:.5em 1.4em;margin:.6em 0;padding:0;list-style:none}.totals b{font-variant-numeric:tabular-nums}
.toolbar{display:flex;flex-wrap:wrap;gap:.6em 1.2em;align-items:center;padding:.6em 1.5em;border-block:1px solid var(--line);background:var(--card);position:sticky;top:0;z-index:1}
.toolbar label{display:flex;gap:.4em;align-items:center}select,button{font:inherit}
.sheet{position:relative;margin:.8em 1.5em;min-height:4em}
.card{position:absolute;top:0;left:0;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.4em;display:flex;flex-direction:column;gap:.2em;min-width:0;overflow:hidden;cursor:pointer}
.card.problem{border-color:var(--bad);border-width:2px}.card:hover{border-color:var(--muted)}
.open{all:unset;display:block;border-radius:5px}.open:focus-visible{outline:2px solid var(--ok);outline-offset:2px}
.thumb{position:relative;display:flex;align-items:center;justify-content:center;aspect-ratio:16/9;background:#000;border-radius:5px;overflow:hidden;color:#ccc}
.thumb video{max-width:100%;max-height:100%;width:auto;height:100%;object-fit:contain;display:block}.thumb .check-failed{position:absolute;left:0;right:0;bottom:0;padding:.2em .4em;background:rgba(110,0,0,.88);color:#fff;font-size:.75em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}.take-check{display:block;color:var(--bad);font-size:.85em;margin:.2em 0}.thumb .error-code{color:#ff8a80;padding:.3em;text-align:center;overflow-wrap:anywhere}
.card>.id{font-size:.85em;line-height:1.3;height:1.3em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;flex:none}
.card>.line{margin:0;font-size:.8em;line-height:1.3;height:1.3em;color:var(--muted);white-space:nowrap;overflow:hidden;text-overflow:ellipsis;flex:none}
.badge{font-size:.75em;padding:0 .45em;border-radius:99px;border:1px solid currentColor;white-space:nowrap}
.state-done .badge{color:var(--ok)}.state-failed .badge,.state-checks_failed .badge,.state-expired .badge,.state-budget_exceeded .badge{color:var(--bad)}.state-in_flight .badge,.state-pending .badge{color:var(--warn)}
.facts{font-size:.8em;color:var(--muted);margin:0;display:flex;align-items:center;gap:.3em;white-space:nowrap}.facts .badge,.facts .cost,.facts .vlabel{flex:none}
.facts .count{min-width:0;overflow:hidden;text-overflow:ellipsis}.foot{display:flex;align-items:center;gap:.3em}.foot .facts{flex:1;min-width:0}.redo{font-size:.85em;cursor:default;white-space:nowrap}
dialog#viewer{width:min(960px,94vw);max-height:94vh;border:1px solid var(--line);border-radius:10px;background:var(--card);color:var(--ink);padding:1em}
dialog#viewer::backdrop{background:rgba(0,0,0,.65)}
.viewer-head{display:flex;gap:.6em;align-items:center;margin-bottom:.6em}.viewer-head button{margin-left:auto}
#viewer-body{display:flex;flex-direction:column;gap:.5em}.error{color:var(--bad);margin:0;overflow-wrap:anywhere}
#viewer video{width:100%;max-height:68vh;border-radius:6px;background:#000;display:block}#viewer .take.earlier video{width:50%}
.take-meta{margin:.2em 0 0;font-size:.85em;color:var(--muted)}
.prompt{margin:0;overflow-wrap:anywhere}.params{display:flex;flex-wrap:wrap;gap:.3em;margin:0;padding:0;list-style:none}
.params li{font-size:.8em;border:1px solid var(--line);border-radius:4px;padding:0 .4em}.params li.axis{border-color:var(--ok)}
.redo-panel{position:sticky;bottom:0;background:var(--card);border-top:1px solid var(--line);padding:.5em 1.5em;display:flex;flex-direction:column;gap:.4em}
.picker{display:flex;flex-wrap:wrap;gap:.6em;align-items:center}.picker>b{min-width:3em}
.redo-panel code{flex:1 1 30em;padding:.35em .6em;border:1px solid var(--line);border-radius:6px;user-select:all;overflow-wrap:anywhere}
.card.group{flex-direction:column}.variants{display:flex;gap:.4em;min-width:0}.variant{flex:1 1 0;min-width:0;display:flex;flex-direction:column;gap:.2em}
.group-facts{margin:0;font-size:.85em;white-space:nowrap;display:flex;gap:.3em;color:var(--muted)}.group-facts .id{color:var(--ink);min-width:0;overflow:hidden;text-overflow:ellipsis}.group-facts .cost{flex:none}
.vlabel{color:var(--ink)}button.keep{font-size:.8em;padding:0 .5em;border:1px solid var(--line);border-radius:99px;background:transparent;color:inherit;cursor:pointer;white-space:nowrap}
button.keep[aria-pressed=true]{background:var(--ok);border-color:var(--ok);color:var(--card);font-weight:600}
.variant-row{display:grid;grid-template-columns:repeat(auto-fit,minmax(240px,1fr));gap:.8em}.variant-head{font-size:1em;margin:0 0 .3em;display:flex;flex-wrap:wrap;gap:.4em;align-items:center}
.redo-panel a[aria-disabled=true]{pointer-events:none;opacity:.5}
.expiry{color:var(--warn);margin:.3em 0}.warning{background:#fff4d6;color:#5a3d00;border:1px solid #e0b84c;padding:.4em .8em;margin:.3em 0}
details.history{padding:0 1.5em 5em}table{border-collapse:collapse}#history-more{margin:.6em 0}th,td{border:1px solid var(--line);padding:.25em .5em;text-align:left;vertical-align:top}
`;
