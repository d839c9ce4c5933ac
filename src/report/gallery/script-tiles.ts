/**
 * The tiles of the contact sheet, part of the page's one script (script.ts joins the parts inside
 * one function, so they share its variables: items, grid, selected, shownList). Text goes in with
 * textContent and attributes with setAttribute only.
 *
 * Windowed: only the tiles within one screen above or below the viewport exist; each is placed by
 * its position among the items the filters show, in rows of a fixed height. Ten thousand tiles in
 * the document made every chunk drawn, and every filter change, lay out all of them again
 * (docs/performance.md, "The gallery page"); a window of about a hundred costs the same at any size.
 *
 * Videos: a tile gets its <video> when it enters the window, with preload="none", so nothing is
 * fetched; once it has stayed in view (an IntersectionObserver) for a moment, preload becomes
 * "metadata", which fetches the file's first bytes and draws its first frame. A tile that leaves
 * the window loses its video (src removed, load() called), which frees the decoder.
 */
export const TILES_SCRIPT = `
  var PROBLEM = { failed: true, expired: true, budget_exceeded: true };
  var GAP = 10;
  var MIN_TILE = 180;
  var DWELL_MS = 120;
  var geo = { cols: 1, tileW: MIN_TILE, tileH: 200, rowH: 210 };
  var live = new Map();
  function words(state) { return state.replace(/_/g, ' '); }
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function firstVideo(item) {
    var take = item.takes[0];
    if (!take) return null;
    for (var i = 0; i < take.files.length; i += 1) if (take.files[i].video && take.files[i].href) return take.files[i];
    return null;
  }
  function makeTile(item, index) {
    var tile = el('article', 'card state-' + item.state + (PROBLEM[item.state] ? ' problem' : ''));
    tile.id = 'item-' + item.id;
    tile.setAttribute('data-state', item.state);
    tile.setAttribute('data-index', String(index));
    item.axes.forEach(function (value, axis) { tile.setAttribute('data-axis-' + axis, value); });
    tile.setAttribute('title', item.prompt);
    var open = el('button', 'open');
    open.type = 'button';
    open.setAttribute('aria-label', 'open ' + item.id);
    var thumb = el('span', 'thumb');
    if (item.error) thumb.appendChild(el('code', 'error-code', item.error.code));
    else if (item.takes.length === 0) thumb.appendChild(el('span', 'no-take', words(item.state)));
    open.appendChild(thumb);
    tile.appendChild(open);
    tile.appendChild(el('code', 'id', item.id));
    var facts = el('p', 'facts');
    facts.appendChild(el('span', 'badge', words(item.state)));
    var count = item.takes.length;
    facts.appendChild(document.createTextNode(' ' + item.cost + (count > 0 ? ' · ' + count + (count === 1 ? ' take' : ' takes') : '')));
    var foot = el('div', 'foot');
    foot.appendChild(facts);
    tile.appendChild(foot);
    if (count > 0) {
      var label = el('label', 'redo');
      var box = el('input', 'redo-box');
      box.type = 'checkbox';
      box.setAttribute('data-id', item.id);
      box.checked = selected.has(item.id);
      label.appendChild(box);
      label.appendChild(document.createTextNode(' redo'));
      foot.appendChild(label);
    }
    return tile;
  }

  var inView = new Set();
  function attach(tile, item) {
    var file = firstVideo(item);
    if (!file) return;
    var video = el('video');
    video.muted = true;
    video.preload = 'none';
    video.setAttribute('playsinline', '');
    video.setAttribute('title', file.label);
    video.setAttribute('src', file.href);
    tile.querySelector('.thumb').appendChild(video);
    seen.observe(tile);
  }
  function release(tile) {
    seen.unobserve(tile);
    inView.delete(tile);
    var video = tile.querySelector('.thumb video');
    if (!video) return;
    video.removeAttribute('src');
    video.load();
  }
  // In view for DWELL_MS (not just flung past): fetch the header and draw the first frame.
  var seen = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      var tile = entry.target;
      if (!entry.isIntersecting) { inView.delete(tile); return; }
      inView.add(tile);
      setTimeout(function () {
        var video = inView.has(tile) && tile.querySelector('.thumb video');
        if (video) video.preload = 'metadata';
      }, DWELL_MS);
    });
  });

  // Every tile has one size: measured once per width from a tile with every part (a redo box).
  function measure() {
    var width = grid.clientWidth;
    geo.cols = Math.max(1, Math.floor((width + GAP) / (MIN_TILE + GAP)));
    geo.tileW = (width - GAP * (geo.cols - 1)) / geo.cols;
    var sample = makeTile({ id: 'x', state: 'done', prompt: '', axes: [], cost: '', takes: [{ files: [] }], error: null }, -1);
    sample.style.width = geo.tileW + 'px';
    sample.style.visibility = 'hidden';
    grid.appendChild(sample);
    geo.tileH = sample.offsetHeight;
    sample.remove();
    geo.rowH = geo.tileH + GAP;
  }
  function place(tile, position) {
    var x = (position % geo.cols) * (geo.tileW + GAP);
    var y = Math.floor(position / geo.cols) * geo.rowH;
    tile.style.transform = 'translate(' + x + 'px,' + y + 'px)';
    tile.style.width = geo.tileW + 'px';
    tile.style.height = geo.tileH + 'px';
  }
  function sheetHeight() {
    var rows = Math.ceil(shownList.length / geo.cols);
    grid.style.height = Math.max(0, rows * geo.rowH - GAP) + 'px';
  }
  // The tiles within a screen of the viewport: made when they enter, removed when they leave.
  function drawWindow() {
    var top = -grid.getBoundingClientRect().top;
    var screen = window.innerHeight;
    var first = Math.max(0, Math.floor((top - screen) / geo.rowH)) * geo.cols;
    var last = Math.min(shownList.length, Math.ceil((top + 2 * screen) / geo.rowH) * geo.cols);
    var wanted = new Map();
    for (var p = first; p < last; p += 1) wanted.set(shownList[p], p);
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
      place(tile, position);
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
