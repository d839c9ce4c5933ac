import { HISTORY_SCRIPT } from './script-history.js';
import { KEEP_SCRIPT } from './script-keep.js';
import { TILES_SCRIPT } from './script-tiles.js';
import { VIEWER_SCRIPT } from './script-viewer.js';

/**
 * The page's only script, allowed by its hash in the page's CSP. It reads the items from the
 * page's JSON data block (page-data.ts) and writes with textContent and setAttribute, so no
 * manifest or service string is ever parsed as markup. It draws the tiles (script-tiles.ts),
 * filters them, opens one larger (script-viewer.ts), fills the attempts table when it is opened
 * (script-history.ts), builds the redo command and redo.txt from the ticked takes, and the keep
 * command and keep.txt from the picked keepers (script-keep.ts). Filters work on the data: a
 * change is one pass over the items and a new window of tiles. An item with variants is one
 * tile: a state filter shows it when any of its variants is in that state.
 */
export const GALLERY_SCRIPT = `
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('gallery-data').textContent);
  var items = data.tiles;
  var grid = document.getElementById('cards');
  var selected = new Set();
  // A drop-down of values, or a text field (data-match="text") for an axis of many: its values containing the text.
  var filters = Array.prototype.slice.call(document.querySelectorAll('[data-filter]'));
  var shown = document.getElementById('shown-count');
  var shownList = [];
  // Every ledger item's id leads to its tile: a variant's (x.v2, as the attempts table names it) too.
  var indexOf = new Map();
  items.forEach(function (item, index) {
    indexOf.set(item.id, index);
    (item.variants || []).forEach(function (variant) { indexOf.set(variant.id, index); });
  });
  function hasState(item, state) {
    if (!item.variants) return item.state === state;
    return item.variants.some(function (variant) { return variant.state === state; });
  }
  // The check filter: an item's newest take's check (a take never checked is unchecked); any variant's.
  function checkOf(entry) {
    var take = entry.takes[0];
    if (!take) return null;
    return take.check ? take.check.outcome : 'unchecked';
  }
  function hasCheck(item, outcome) {
    return membersOf(item).some(function (entry) { return checkOf(entry) === outcome; });
  }
  function readFilters() {
    return filters.filter(function (field) { return field.value.trim() !== ''; }).map(function (field) {
      var attr = field.getAttribute('data-filter');
      var text = field.getAttribute('data-match') === 'text';
      return {
        axis: attr === 'data-state' ? -1 : attr === 'data-check' ? -2 : Number(attr.slice('data-axis-'.length)),
        value: text ? field.value.trim().toLowerCase() : field.value,
        text: text,
      };
    });
  }
  function matches(item, filter) {
    if (filter.axis === -2) return hasCheck(item, filter.value);
    if (filter.axis < 0) return hasState(item, filter.value);
    var value = item.axes[filter.axis];
    if (!filter.text) return value === filter.value;
    return typeof value === 'string' && value.toLowerCase().indexOf(filter.value) >= 0;
  }
  function applyFilters() {
    var active = readFilters();
    shownList = [];
    for (var i = 0; i < items.length; i += 1) {
      var keep = true;
      for (var f = 0; f < active.length && keep; f += 1) {
        keep = matches(items[i], active[f]);
      }
      if (keep) shownList.push(i);
    }
    if (shown) shown.textContent = String(shownList.length);
    grid.setAttribute('data-shown', String(shownList.length));
    sheetHeight();
    drawWindow();
  }
  filters.forEach(function (field) {
    field.addEventListener(field.tagName === 'SELECT' ? 'change' : 'input', applyFilters);
  });
${TILES_SCRIPT}
${VIEWER_SCRIPT}
${HISTORY_SCRIPT}
${KEEP_SCRIPT}
  var command = document.getElementById('redo-command');
  var file = document.getElementById('redo-file');
  var copy = document.getElementById('redo-copy');
  function updateRedo() {
    var ids = [];
    items.forEach(function (item) {
      membersOf(item).forEach(function (entry) { if (selected.has(entry.id)) ids.push(entry.id); });
    });
    var base = command.getAttribute('data-base');
    command.textContent = ids.length === 0 ? 'tick "redo" on the takes to generate again' : base + ' --redo ' + ids.join(' ');
    file.setAttribute('href', 'data:text/plain;charset=utf-8,' + encodeURIComponent(ids.join('\\n') + (ids.length ? '\\n' : '')));
    file.setAttribute('aria-disabled', ids.length === 0 ? 'true' : 'false');
    copy.disabled = ids.length === 0;
  }
  function setRedo(id, on) {
    if (on) selected.add(id); else selected.delete(id);
    [live.get(indexOf.get(id)), viewerBody].forEach(function (scope) {
      if (!scope) return;
      scope.querySelectorAll('input.redo-box').forEach(function (box) {
        if (box.getAttribute('data-id') === id) box.checked = on;
      });
    });
    updateRedo();
  }
  // One listener each for every tile: ten thousand tiles need no ten thousand handlers.
  grid.addEventListener('change', function (event) {
    var box = event.target;
    if (box.classList.contains('redo-box')) setRedo(box.getAttribute('data-id'), box.checked);
  });
  grid.addEventListener('click', function (event) {
    if (event.target.closest('.redo') || event.target.closest('.keep')) return;
    var tile = event.target.closest('.card');
    if (tile) openViewer(Number(tile.getAttribute('data-index')));
  });
  // The clipboard where the browser grants it (not to a file:// page in every browser), else the
  // text selected, for Ctrl+C.
  function copyText(code) {
    var text = code.textContent;
    function fallback() {
      var range = document.createRange();
      range.selectNodeContents(code);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      try { document.execCommand('copy'); } catch (e) { /* the text stays selected to copy by hand */ }
    }
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).catch(fallback);
    else fallback();
  }
  copy.addEventListener('click', function () { copyText(command); });
  measure();
  applyFilters();
  updateRedo();
  updateKeep();
  // A link to one item (index.html#item-ID, as the attempts table makes) opens it.
  var linked = location.hash.indexOf('#item-') === 0 ? indexOf.get(location.hash.slice('#item-'.length)) : undefined;
  if (linked !== undefined) openViewer(linked);
  grid.setAttribute('data-ready', 'true');
})();
`;
