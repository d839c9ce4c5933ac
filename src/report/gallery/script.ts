import { HISTORY_SCRIPT } from './script-history.js';
import { TILES_SCRIPT } from './script-tiles.js';
import { VIEWER_SCRIPT } from './script-viewer.js';

/**
 * The page's only script, allowed by its hash in the page's CSP. It reads the items from the
 * page's JSON data block (page-data.ts) and writes with textContent and setAttribute, so no
 * manifest or service string is ever parsed as markup. It draws the tiles (script-tiles.ts),
 * filters them, opens one larger (script-viewer.ts), fills the attempts table when it is opened
 * (script-history.ts) and builds the redo command and redo.txt from the ticked takes. Filters
 * work on the data: a change is one pass over the items and a new window of tiles.
 */
export const GALLERY_SCRIPT = `
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('gallery-data').textContent);
  var items = data.tiles;
  var grid = document.getElementById('cards');
  var selected = new Set();
  var filters = Array.prototype.slice.call(document.querySelectorAll('select[data-filter]'));
  var shown = document.getElementById('shown-count');
  var shownList = [];
  var indexOf = new Map(items.map(function (item, index) { return [item.id, index]; }));
  function readFilters() {
    return filters.filter(function (select) { return select.value !== ''; }).map(function (select) {
      var attr = select.getAttribute('data-filter');
      return { axis: attr === 'data-state' ? -1 : Number(attr.slice('data-axis-'.length)), value: select.value };
    });
  }
  function applyFilters() {
    var active = readFilters();
    shownList = [];
    for (var i = 0; i < items.length; i += 1) {
      var keep = true;
      for (var f = 0; f < active.length && keep; f += 1) {
        keep = (active[f].axis < 0 ? items[i].state : items[i].axes[active[f].axis]) === active[f].value;
      }
      if (keep) shownList.push(i);
    }
    if (shown) shown.textContent = String(shownList.length);
    grid.setAttribute('data-shown', String(shownList.length));
    sheetHeight();
    drawWindow();
  }
  filters.forEach(function (select) { select.addEventListener('change', applyFilters); });
${TILES_SCRIPT}
${VIEWER_SCRIPT}
${HISTORY_SCRIPT}
  var command = document.getElementById('redo-command');
  var file = document.getElementById('redo-file');
  var copy = document.getElementById('redo-copy');
  function updateRedo() {
    var ids = items.filter(function (item) { return selected.has(item.id); }).map(function (item) { return item.id; });
    var base = command.getAttribute('data-base');
    command.textContent = ids.length === 0 ? 'tick "redo" on the takes to generate again' : base + ' --redo ' + ids.join(' ');
    file.setAttribute('href', 'data:text/plain;charset=utf-8,' + encodeURIComponent(ids.join('\\n') + (ids.length ? '\\n' : '')));
    file.setAttribute('aria-disabled', ids.length === 0 ? 'true' : 'false');
    copy.disabled = ids.length === 0;
  }
  function setRedo(id, on) {
    if (on) selected.add(id); else selected.delete(id);
    var tile = live.get(indexOf.get(id));
    var box = tile && tile.querySelector('input.redo-box');
    if (box) box.checked = on;
    updateRedo();
  }
  // One listener each for every tile: ten thousand tiles need no ten thousand handlers.
  grid.addEventListener('change', function (event) {
    var box = event.target;
    if (box.classList.contains('redo-box')) setRedo(box.getAttribute('data-id'), box.checked);
  });
  grid.addEventListener('click', function (event) {
    if (event.target.closest('.redo')) return;
    var tile = event.target.closest('.card');
    if (tile) openViewer(Number(tile.getAttribute('data-index')));
  });
  copy.addEventListener('click', function () {
    var text = command.textContent;
    function fallback() {
      var range = document.createRange();
      range.selectNodeContents(command);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      try { document.execCommand('copy'); } catch (e) { /* the text stays selected to copy by hand */ }
    }
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).catch(fallback);
    else fallback();
  });
  measure();
  applyFilters();
  updateRedo();
  // A link to one item (index.html#item-ID, as the attempts table makes) opens it.
  var linked = location.hash.indexOf('#item-') === 0 ? indexOf.get(location.hash.slice('#item-'.length)) : undefined;
  if (linked !== undefined) openViewer(linked);
  grid.setAttribute('data-ready', 'true');
})();
`;
