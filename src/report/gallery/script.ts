/**
 * The page's only script, allowed by its hash in the page's CSP. It reads item data from escaped
 * data- attributes and writes with textContent, so no manifest or service string is ever parsed
 * as markup. It filters cards and builds the redo command and redo.txt from the ticked takes.
 */
export const GALLERY_SCRIPT = `
(function () {
  'use strict';
  var cards = Array.prototype.slice.call(document.querySelectorAll('.card'));
  var filters = Array.prototype.slice.call(document.querySelectorAll('select[data-filter]'));
  var shown = document.getElementById('shown-count');
  function applyFilters() {
    var visible = 0;
    cards.forEach(function (card) {
      var hide = filters.some(function (select) {
        return select.value !== '' && card.getAttribute(select.getAttribute('data-filter')) !== select.value;
      });
      card.hidden = hide;
      if (!hide) visible += 1;
    });
    if (shown) shown.textContent = String(visible);
  }
  filters.forEach(function (select) { select.addEventListener('change', applyFilters); });

  var boxes = Array.prototype.slice.call(document.querySelectorAll('input.redo-box'));
  var command = document.getElementById('redo-command');
  var file = document.getElementById('redo-file');
  var copy = document.getElementById('redo-copy');
  function selected() {
    return boxes.filter(function (box) { return box.checked; }).map(function (box) { return box.getAttribute('data-id'); });
  }
  function updateRedo() {
    var ids = selected();
    var base = command.getAttribute('data-base');
    command.textContent = ids.length === 0 ? 'tick "redo" on the takes to generate again' : base + ' --redo ' + ids.join(' ');
    file.setAttribute('href', 'data:text/plain;charset=utf-8,' + encodeURIComponent(ids.join('\\n') + (ids.length ? '\\n' : '')));
    file.setAttribute('aria-disabled', ids.length === 0 ? 'true' : 'false');
    copy.disabled = ids.length === 0;
  }
  boxes.forEach(function (box) { box.addEventListener('change', updateRedo); });
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
  applyFilters();
  updateRedo();
})();
`;
