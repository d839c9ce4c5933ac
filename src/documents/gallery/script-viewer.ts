/**
 * The larger view of one item, part of the page's one script (see script-tiles.ts): a click on a
 * tile (or Enter on its button) opens the <dialog> with every take as a full player, newest
 * first, the error, the prompt and the parameters; for an item with variants, each variant in
 * its own section with its takes. Every take has a "keep" button, so an earlier take can be kept
 * (keep.txt: ID:N.T). Closing it removes its players, so a viewed item holds no decoder
 * afterwards. Text goes in with textContent only.
 */
export const VIEWER_SCRIPT = `
  var viewer = document.getElementById('viewer');
  var viewerBody = document.getElementById('viewer-body');
  var viewerRedo = document.getElementById('viewer-redo');
  var shownItem = -1;
  function takeBlock(take, newest, group, n) {
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
    var meta = el('p', 'take-meta', facts.join(' · ') + ' ');
    meta.appendChild(keepButton(group, newest ? String(n) : n + '.' + take.take, 'take'));
    block.appendChild(meta);
    var badge = checkBadge(take, 'take-check check-failed');
    if (badge) block.appendChild(badge);
    return block;
  }
  function variantSection(item, variant) {
    var section = el('section', 'variant-block state-' + variant.state);
    section.setAttribute('data-id', variant.id);
    var head = el('h3', 'variant-head');
    head.appendChild(el('b', 'vlabel', 'v' + variant.n));
    head.appendChild(document.createTextNode(' '));
    head.appendChild(el('code', '', variant.id));
    head.appendChild(document.createTextNode(' '));
    head.appendChild(el('span', 'badge', words(variant.state)));
    head.appendChild(document.createTextNode(' ' + variant.cost + ' '));
    if (variant.takes.length > 0) head.appendChild(redoLabel(variant.id));
    section.appendChild(head);
    if (variant.error) section.appendChild(errorLine(variant.error));
    variant.takes.forEach(function (take, n) { section.appendChild(takeBlock(take, n === 0, item.id, variant.n)); });
    return section;
  }
  function errorLine(failure) {
    var error = el('p', 'error');
    error.appendChild(el('code', 'error-code', failure.code));
    error.appendChild(document.createTextNode(': '));
    error.appendChild(el('span', 'error-message', failure.message));
    return error;
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
    if (item.error) viewerBody.appendChild(errorLine(item.error));
    item.takes.forEach(function (take, n) { viewerBody.appendChild(takeBlock(take, n === 0, item.id, 1)); });
    if (item.variants) {
      // Side by side, as on the tile: the point is to compare them.
      var row = el('div', 'variant-row');
      item.variants.forEach(function (variant) { row.appendChild(variantSection(item, variant)); });
      viewerBody.appendChild(row);
    }
    viewerBody.appendChild(el('p', 'prompt', item.prompt));
    if (item.matrix.length + item.input.length > 0) viewerBody.appendChild(chips(item));
    var facts = 'cost ' + item.cost + (item.clip === null ? '' : ' · ' + item.clip + ' s clip');
    if (item.takes.length > 1) facts += ' · ' + item.takes.length + ' takes';
    viewerBody.appendChild(el('p', 'facts', facts));
    // An item with variants has a redo box per variant, in its section.
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
  viewerBody.addEventListener('change', function (event) {
    var box = event.target;
    if (box.classList.contains('redo-box')) setRedo(box.getAttribute('data-id'), box.checked);
  });
`;
