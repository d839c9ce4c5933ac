/**
 * The keeper picker, part of the page's one script (see script-tiles.ts): one pick per item, the
 * take a person keeps, as `keep` names it: `N` (variant N's newest take) or `N.T` (its take T).
 * The picks start as the ledger's keepers (tile.keeper), so the page shows what is kept now; a
 * click on "keep" picks that take, a click on another changes it, and a click on the picked one
 * goes back to the ledger's keeper (the page never clears a kept take: `keep` does). The bar at
 * the bottom shows the `keep` command of every pick and keep.txt, one `ID:VARIANT[.TAKE]` a line, in the
 * page's order: running it again for an unchanged keeper changes nothing.
 */
export const KEEP_SCRIPT = `
  var saved = new Map();
  items.forEach(function (item) { if (item.keeper) saved.set(item.id, item.keeper); });
  var picks = new Map(saved);
  // A tile's button stands for a variant (kept whichever of its takes is picked); a take's, for that take.
  function showKeep(button) {
    var pick = picks.get(button.getAttribute('data-group'));
    var spec = button.getAttribute('data-spec');
    var pressed = pick !== undefined && (pick === spec ||
      (button.getAttribute('data-match') === 'variant' && pick.indexOf(spec + '.') === 0));
    button.setAttribute('aria-pressed', pressed ? 'true' : 'false');
    button.textContent = !pressed ? 'keep' : pick === spec ? 'kept' : 'kept: take ' + pick.slice(spec.length + 1);
  }
  function refreshKeep(group) {
    var tile = live.get(indexOf.get(group));
    var scopes = [tile, shownItem >= 0 && items[shownItem].id === group ? viewerBody : null];
    scopes.forEach(function (scope) {
      if (scope) scope.querySelectorAll('button.keep').forEach(showKeep);
    });
  }
  function pickKeeper(group, spec) {
    if (picks.get(group) !== spec) picks.set(group, spec);
    else if (saved.has(group)) picks.set(group, saved.get(group));
    else picks.delete(group);
    refreshKeep(group);
    updateKeep();
  }
  var keepCommand = document.getElementById('keep-command');
  var keepFile = document.getElementById('keep-file');
  var keepCopy = document.getElementById('keep-copy');
  function updateKeep() {
    var lines = items.filter(function (item) { return picks.has(item.id); }).map(function (item) {
      return item.id + ':' + picks.get(item.id);
    });
    keepCommand.textContent = lines.length === 0 ? 'click "keep" on the take you keep of each item'
      : keepCommand.getAttribute('data-base') + ' ' + lines.join(' ');
    keepFile.setAttribute('href', 'data:text/plain;charset=utf-8,' + encodeURIComponent(lines.join('\\n') + (lines.length ? '\\n' : '')));
    keepFile.setAttribute('aria-disabled', lines.length === 0 ? 'true' : 'false');
    keepCopy.disabled = lines.length === 0;
  }
  // One listener for every keep button, on the tiles and in the larger view.
  document.addEventListener('click', function (event) {
    var button = event.target.closest && event.target.closest('button.keep');
    if (button) pickKeeper(button.getAttribute('data-group'), button.getAttribute('data-spec'));
  });
  keepCopy.addEventListener('click', function () { copyText(keepCommand); });
`;
