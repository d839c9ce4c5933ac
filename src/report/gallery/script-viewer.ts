/**
 * The larger view of one item, part of the page's one script (see script-tiles.ts): a click on a
 * tile (or Enter on its button) opens the <dialog> with every take as a full player, newest
 * first, the error, the prompt and the parameters. Closing it removes its players, so a viewed
 * item holds no decoder afterwards. Text goes in with textContent only.
 */
export const VIEWER_SCRIPT = `
  var viewer = document.getElementById('viewer');
  var viewerBody = document.getElementById('viewer-body');
  var viewerRedo = document.getElementById('viewer-redo');
  var shownItem = -1;
  function takeBlock(take, newest) {
    var block = el('div', newest ? 'take' : 'take earlier');
    block.setAttribute('data-take', String(take.take));
    take.files.forEach(function (file) {
      if (file.video && file.href) {
        var video = el('video');
        video.controls = true;
        video.preload = 'metadata';
        video.setAttribute('title', file.label);
        video.setAttribute('src', file.href);
        block.appendChild(video);
      } else if (file.href) {
        var link = el('a', '', file.label);
        link.setAttribute('href', file.href);
        block.appendChild(link);
      } else block.appendChild(el('span', 'file-name', file.label));
    });
    var facts = ['take ' + take.take];
    if (take.job !== null) facts.push(take.job);
    facts.push(take.cost);
    if (take.secs !== null) facts.push('generated in ' + take.secs + ' s');
    block.appendChild(el('p', 'take-meta', facts.join(' · ')));
    return block;
  }
  function chips(item) {
    var list = el('ul', 'params');
    item.matrix.forEach(function (pair) { list.appendChild(el('li', 'axis', pair[0] + ': ' + pair[1])); });
    item.input.forEach(function (pair) { list.appendChild(el('li', '', pair[0] + ': ' + pair[1])); });
    return list;
  }
  function openViewer(index) {
    var item = items[index];
    closePlayers();
    shownItem = index;
    viewer.className = 'state-' + item.state;
    document.getElementById('viewer-id').textContent = item.id;
    document.getElementById('viewer-state').textContent = words(item.state);
    if (item.error) {
      var error = el('p', 'error');
      error.appendChild(el('code', 'error-code', item.error.code));
      error.appendChild(document.createTextNode(': '));
      error.appendChild(el('span', 'error-message', item.error.message));
      viewerBody.appendChild(error);
    }
    item.takes.forEach(function (take, n) { viewerBody.appendChild(takeBlock(take, n === 0)); });
    viewerBody.appendChild(el('p', 'prompt', item.prompt));
    if (item.matrix.length + item.input.length > 0) viewerBody.appendChild(chips(item));
    var facts = 'cost ' + item.cost + (item.clip === null ? '' : ' · ' + item.clip + ' s clip');
    if (item.takes.length > 1) facts += ' · ' + item.takes.length + ' takes';
    viewerBody.appendChild(el('p', 'facts', facts));
    viewerRedo.parentNode.hidden = item.takes.length === 0;
    viewerRedo.checked = selected.has(item.id);
    if (!viewer.open) viewer.showModal();
  }
  function closePlayers() {
    viewerBody.querySelectorAll('video').forEach(function (video) {
      video.removeAttribute('src');
      video.load();
    });
    viewerBody.textContent = '';
    shownItem = -1;
  }
  viewer.addEventListener('close', closePlayers);
  document.getElementById('viewer-close').addEventListener('click', function () { viewer.close(); });
  // A click on the backdrop (outside the dialog's box) closes it, as Escape does.
  viewer.addEventListener('click', function (event) { if (event.target === viewer) viewer.close(); });
  viewerRedo.addEventListener('change', function () {
    if (shownItem < 0) return;
    setRedo(items[shownItem].id, viewerRedo.checked);
  });
`;
