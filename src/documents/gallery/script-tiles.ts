/**
 * The tiles of the contact sheet, part of the page's one script (script.ts joins the parts inside
 * one function, so they share its variables: items, grid, selected, shownList). Text goes in with
 * textContent and attributes with setAttribute only.
 *
 * Windowed: only the tiles within one screen above or below the viewport exist; each is placed by
 * its position among the items the filters show, in rows of a fixed height. An item with variants
 * is one tile as wide as its variants (one column each, at most a row), so they sit side by side;
 * the rows are laid out once per filter change or width (layoutShown), a pass over the shown items. Ten thousand tiles in
 * the document made every chunk drawn, and every filter change, lay out all of them again
 * (docs/performance.md, "The gallery page"); a window of about a hundred costs the same at any size.
 *
 * Videos: a tile gets its <video> when it enters the window, with preload="none", so nothing is
 * fetched; once it has stayed in view (an IntersectionObserver) for a moment, preload becomes
 * "metadata", which fetches the file's first bytes and draws its first frame. A tile that leaves
 * the window loses its video (src removed, load() called), which frees the decoder.
 */
export const TILES_SCRIPT = `
  var PROBLEM = { failed: true, checks_failed: true, expired: true, budget_exceeded: true };
  var GAP = 10;
  var MIN_TILE = 180;
  var DWELL_MS = 120;
  var geo = { cols: 1, tileW: MIN_TILE, tileH: 200, rowH: 210 };
  var layout = { row: [], col: [], rowFirst: [0], rows: 0 };
  var live = new Map();
  function words(state) { return state.replace(/_/g, ' '); }
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function firstVideo(entry) {
    var take = entry.takes[0];
    if (!take) return null;
    for (var i = 0; i < take.files.length; i += 1) if (take.files[i].video && take.files[i].href) return take.files[i];
    return null;
  }
  // The ledger items a tile stands for: its variants, or the item itself.
  function membersOf(item) {
    return item.variants || [{ id: item.id, n: 1, state: item.state, cost: item.cost, error: item.error, takes: item.takes }];
  }
  // A take whose check failed says why (and its score), as \`mediabatch check\` words it.
  function checkWords(take) {
    if (!take || !take.check || take.check.outcome !== 'failed') return null;
    var score = take.check.score === undefined ? '' : ' (score ' + take.check.score + ')';
    return 'check failed' + score + (take.check.reason ? ': ' + take.check.reason : '');
  }
  function checkBadge(take, className) {
    var text = checkWords(take);
    if (text === null) return null;
    var badge = el('span', className, text);
    badge.setAttribute('title', text);
    return badge;
  }
  // The badge lies over the thumb, which has one size: every row keeps the height measure() found.
  function thumbOf(entry) {
    var thumb = el('span', 'thumb');
    if (entry.error) thumb.appendChild(el('code', 'error-code', entry.error.code));
    else if (entry.takes.length === 0) thumb.appendChild(el('span', 'no-take', words(entry.state)));
    var badge = checkBadge(entry.takes[0], 'check-failed');
    if (badge) thumb.appendChild(badge);
    return thumb;
  }
  function openButton(label, thumb) {
    var open = el('button', 'open');
    open.type = 'button';
    open.setAttribute('aria-label', 'open ' + label);
    open.appendChild(thumb);
    return open;
  }
  function redoLabel(id) {
    var label = el('label', 'redo');
    var box = el('input', 'redo-box');
    box.type = 'checkbox';
    box.setAttribute('data-id', id);
    box.checked = selected.has(id);
    label.appendChild(box);
    label.appendChild(document.createTextNode(' redo'));
    return label;
  }
  // "keep" on a tile keeps the variant's newest take (keep.txt: ID:N); script-keep.ts says which is kept.
  function keepButton(group, spec, match) {
    var button = el('button', 'keep');
    button.type = 'button';
    button.setAttribute('data-group', group);
    button.setAttribute('data-spec', spec);
    button.setAttribute('data-match', match);
    showKeep(button);
    return button;
  }
  function makeTile(item, index) {
    var tile = el('article', 'card state-' + item.state + (PROBLEM[item.state] ? ' problem' : '') + (item.variants ? ' group' : ''));
    tile.id = 'item-' + item.id;
    tile.setAttribute('data-state', item.state);
    tile.setAttribute('data-index', String(index));
    item.axes.forEach(function (value, axis) { tile.setAttribute('data-axis-' + axis, value); });
    tile.setAttribute('title', item.prompt);
    if (item.variants) return groupTile(tile, item);
    tile.appendChild(openButton(item.id, thumbOf(item)));
    tile.appendChild(el('code', 'id', item.id));
    // The prompt, cut to its line: the line a narrow card gives up, never the state or the cost.
    tile.appendChild(el('p', 'line', item.prompt));
    var facts = el('p', 'facts');
    facts.appendChild(el('span', 'badge', words(item.state)));
    facts.appendChild(el('span', 'cost', item.cost));
    var count = item.takes.length;
    if (count > 0) facts.appendChild(el('span', 'count', '· ' + count + (count === 1 ? ' take' : ' takes')));
    var foot = el('div', 'foot');
    foot.appendChild(facts);
    tile.appendChild(foot);
    if (count > 0) {
      foot.appendChild(redoLabel(item.id));
      foot.appendChild(keepButton(item.id, '1', 'variant'));
    }
    return tile;
  }
  // Each variant in a column of its own: its first frame, label, state, cost, redo and keep.
  function groupTile(tile, item) {
    var row = el('div', 'variants');
    item.variants.forEach(function (variant) {
      var cell = el('div', 'variant state-' + variant.state);
      cell.setAttribute('data-id', variant.id);
      cell.appendChild(openButton(variant.id, thumbOf(variant)));
      var foot = el('div', 'foot');
      var facts = el('p', 'facts');
      facts.appendChild(el('b', 'vlabel', 'v' + variant.n));
      facts.appendChild(document.createTextNode(' '));
      facts.appendChild(el('span', 'badge', words(variant.state)));
      facts.appendChild(el('span', 'cost', variant.cost));
      foot.appendChild(facts);
      if (variant.takes.length > 0) {
        foot.appendChild(redoLabel(variant.id));
        foot.appendChild(keepButton(item.id, String(variant.n), 'variant'));
      }
      cell.appendChild(foot);
      row.appendChild(cell);
    });
    tile.appendChild(row);
    var head = el('p', 'group-facts');
    head.appendChild(el('code', 'id', item.id));
    head.appendChild(el('span', 'cost', '· ' + item.variants.length + ' variants · ' + item.cost));
    tile.appendChild(head);
    tile.appendChild(el('p', 'line', item.prompt));
    return tile;
  }

  var inView = new Set();
  function attach(tile, item) {
    var thumbs = tile.querySelectorAll('.thumb');
    var watched = false;
    membersOf(item).forEach(function (entry, n) {
      var file = firstVideo(entry);
      if (!file || !thumbs[n]) return;
      var video = el('video');
      video.muted = true;
      video.preload = 'none';
      video.setAttribute('playsinline', '');
      video.setAttribute('title', file.label);
      video.setAttribute('src', file.href);
      thumbs[n].appendChild(video);
      watched = true;
    });
    if (watched) seen.observe(tile);
  }
  function release(tile) {
    seen.unobserve(tile);
    inView.delete(tile);
    tile.querySelectorAll('.thumb video').forEach(function (video) {
      video.removeAttribute('src');
      video.load();
    });
  }
  // In view for DWELL_MS (not just flung past): fetch the header and draw the first frame.
  var seen = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      var tile = entry.target;
      if (!entry.isIntersecting) { inView.delete(tile); return; }
      inView.add(tile);
      setTimeout(function () {
        if (!inView.has(tile)) return;
        tile.querySelectorAll('.thumb video').forEach(function (video) { video.preload = 'metadata'; });
      }, DWELL_MS);
    });
  });

  // Every row has one height: measured once per width from a tile with every part (a redo box),
  // and from a tile of two variants when the page has variants.
  function measure() {
    var width = grid.clientWidth;
    geo.cols = Math.max(1, Math.floor((width + GAP) / (MIN_TILE + GAP)));
    geo.tileW = (width - GAP * (geo.cols - 1)) / geo.cols;
    var take = { take: 1, files: [] };
    var samples = [{ id: 'x', state: 'done', prompt: '', axes: [], cost: '', takes: [take], error: null, variants: null }];
    if (items.some(function (item) { return item.variants; })) {
      var v = { id: 'x', n: 1, state: 'done', cost: '', error: null, takes: [take] };
      samples.push({ id: 'x', state: 'done', prompt: '', axes: [], cost: '', takes: [], error: null, variants: [v, v] });
    }
    geo.tileH = 0;
    samples.forEach(function (item) {
      var sample = makeTile(item, -1);
      sample.style.width = spanWidth(spanOf(item)) + 'px';
      sample.style.visibility = 'hidden';
      grid.appendChild(sample);
      geo.tileH = Math.max(geo.tileH, sample.offsetHeight);
      sample.remove();
    });
    geo.rowH = geo.tileH + GAP;
  }
  function spanOf(item) { return item.variants ? Math.min(geo.cols, item.variants.length) : 1; }
  function spanWidth(span) { return span * geo.tileW + (span - 1) * GAP; }
  // Rows filled left to right; a tile that does not fit in what is left of a row starts the next.
  function layoutShown() {
    var row = 0;
    var col = 0;
    layout.row = new Array(shownList.length);
    layout.col = new Array(shownList.length);
    layout.rowFirst = [0];
    for (var p = 0; p < shownList.length; p += 1) {
      var span = spanOf(items[shownList[p]]);
      if (col + span > geo.cols) { row += 1; col = 0; layout.rowFirst.push(p); }
      layout.row[p] = row;
      layout.col[p] = col;
      col += span;
    }
    layout.rows = shownList.length === 0 ? 0 : row + 1;
    layout.rowFirst.push(shownList.length);
  }
  function place(tile, position, item) {
    tile.style.transform = 'translate(' + layout.col[position] * (geo.tileW + GAP) + 'px,' + layout.row[position] * geo.rowH + 'px)';
    tile.style.width = spanWidth(spanOf(item)) + 'px';
    tile.style.height = geo.tileH + 'px';
  }
  function sheetHeight() {
    layoutShown();
    grid.style.height = Math.max(0, layout.rows * geo.rowH - GAP) + 'px';
  }
  // The tiles within a screen of the viewport: made when they enter, removed when they leave.
  function drawWindow() {
    var top = -grid.getBoundingClientRect().top;
    var screen = window.innerHeight;
    var firstRow = Math.min(layout.rows, Math.max(0, Math.floor((top - screen) / geo.rowH)));
    var lastRow = Math.min(layout.rows, Math.max(firstRow, Math.ceil((top + 2 * screen) / geo.rowH)));
    var wanted = new Map();
    for (var p = layout.rowFirst[firstRow]; p < layout.rowFirst[lastRow]; p += 1) wanted.set(shownList[p], p);
    live.forEach(function (tile, index) {
      if (wanted.has(index)) return;
      release(tile);
      tile.remove();
      live.delete(index);
    });
    var fragment = document.createDocumentFragment();
    wanted.forEach(function (position, index) {
      var tile = live.get(index);
      if (!tile) {
        tile = makeTile(items[index], index);
        live.set(index, tile);
        fragment.appendChild(tile);
        attach(tile, items[index]);
      }
      place(tile, position, items[index]);
    });
    grid.appendChild(fragment);
  }
  var pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; drawWindow(); });
  }
  window.addEventListener('scroll', redraw, { passive: true });
  window.addEventListener('resize', function () {
    measure();
    sheetHeight();
    redraw();
  });
`;
