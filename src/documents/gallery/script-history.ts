/**
 * The attempts table, part of the page's one script (see script-tiles.ts). Its rows come from the
 * data block and are made when the table is opened, HISTORY_PAGE at a time (a button adds more):
 * ten thousand attempts were 3 MB of markup and a quarter of a million nodes that every page load
 * paid for, folded or not, and drawing 11,000 rows at once took Chromium 4 to 10 s of layout. An
 * item's id in the table opens that item's larger view, wherever the filters and the scroll are.
 */
export const HISTORY_SCRIPT = `
  var history = document.getElementById('history');
  var historyRows = document.getElementById('history-rows');
  function historyRow(row) {
    var tr = el('tr');
    var link = el('a', 'open-item');
    link.setAttribute('href', '#item-' + row[0]);
    link.setAttribute('data-id', row[0]);
    link.appendChild(el('code', '', row[0]));
    var first = el('td');
    first.appendChild(link);
    tr.appendChild(first);
    for (var i = 1; i < row.length; i += 1) {
      var td = el('td');
      if (i === 2 || i === 3) td.appendChild(el('code', '', row[i] + (i === 2 ? '…' : '')));
      else td.textContent = row[i];
      tr.appendChild(td);
    }
    return tr;
  }
  var HISTORY_PAGE = 500;
  var historyMore = document.getElementById('history-more');
  function moreHistory() {
    var start = historyRows.childElementCount;
    var end = Math.min(data.attempts.length, start + HISTORY_PAGE);
    var fragment = document.createDocumentFragment();
    for (var i = start; i < end; i += 1) fragment.appendChild(historyRow(data.attempts[i]));
    historyRows.appendChild(fragment);
    var left = data.attempts.length - end;
    historyMore.hidden = left === 0;
    historyMore.textContent = 'show ' + Math.min(left, HISTORY_PAGE) + ' more of ' + left;
  }
  if (history && historyRows) {
    history.addEventListener('toggle', function () {
      if (history.open && !historyRows.firstChild) moreHistory();
    });
    historyMore.addEventListener('click', moreHistory);
    historyRows.addEventListener('click', function (event) {
      var link = event.target.closest('a.open-item');
      var index = link && indexOf.get(link.getAttribute('data-id'));
      if (index === undefined || index === null) return;
      event.preventDefault();
      openViewer(index);
    });
  }
`;
