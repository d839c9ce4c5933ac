import { escapeHtml, h, usd } from './escape.js';
import type { GalleryCard, GalleryTake } from './model.js';

const PROBLEM_STATES = new Set(['failed', 'expired', 'budget_exceeded']);
const VIDEO_FILE = /\.(mp4|webm|mov|m4v|ogv|mkv)$/i;
const words = (state: string) => state.replace(/_/g, ' ');

function takeBlock(take: GalleryTake, newest: boolean): string {
  const media = take.videos
    .map((video) =>
      // No href: a page that travels names a local file by its name only (model.ts).
      video.href === null
        ? `<span class="file-name">${h(video.label)}</span>`
        : VIDEO_FILE.test(video.label)
          ? `<video preload="metadata" controls src="${escapeHtml(video.href)}" title="${h(video.label)}"></video>`
          : `<a href="${escapeHtml(video.href)}">${h(video.label)}</a>`,
    )
    .join('');
  const facts = [
    `take ${take.take}`,
    take.jobId === null ? null : `<code>${h(take.jobId)}</code>`,
    h(usd(take.costUsd)),
    take.generationSeconds === null ? null : `generated in ${take.generationSeconds} s`,
  ].filter((part) => part !== null);
  return `<div class="take${newest ? '' : ' earlier'}" data-take="${take.take}">${media}<p class="take-meta">${facts.join(' · ')}</p></div>`;
}

function params(card: GalleryCard): string {
  const chips = [
    ...card.matrix.map(([axis, value]) => `<li class="axis">${h(axis)}: ${h(value)}</li>`),
    ...card.input
      .filter(([field]) => !card.matrix.some(([axis]) => axis === field))
      .map(([field, value]) => `<li>${h(field)}: ${h(value)}</li>`),
  ];
  return chips.length === 0 ? '' : `<ul class="params">${chips.join('')}</ul>`;
}

/** One item: its takes (newest first) or its error, then what was asked and what it cost. */
export function renderCard(card: GalleryCard, axes: readonly string[]): string {
  const axisAttrs = axes
    .map((axis, index) => {
      const value = card.matrix.find(([name]) => name === axis)?.[1] ?? '';
      return ` data-axis-${index}="${h(value)}"`;
    })
    .join('');
  const problem = PROBLEM_STATES.has(card.state);
  const error = card.error
    ? `<p class="error"><code class="error-code">${h(card.error.code)}</code>: <span class="error-message">${h(card.error.message)}</span></p>`
    : '';
  const takes = card.takes.map((take, index) => takeBlock(take, index === 0)).join('');
  const clip = card.clipSeconds === null ? '' : ` · ${card.clipSeconds} s clip`;
  const count = card.takes.length > 1 ? ` · ${card.takes.length} takes` : '';
  const redo =
    card.takes.length > 0
      ? `<label class="redo"><input type="checkbox" class="redo-box" data-id="${h(card.id)}"> redo this take</label>`
      : '';
  return `<article class="card state-${h(card.state)}${problem ? ' problem' : ''}" id="item-${h(card.id)}" data-state="${h(card.state)}"${axisAttrs}>
<div class="card-head"><code class="id">${h(card.id)}</code><span class="badge">${h(words(card.state))}</span></div>
${error}${takes}<p class="prompt">${h(card.prompt)}</p>${params(card)}<p class="facts">cost ${h(usd(card.costUsd))}${clip}${count}</p>${redo}
</article>`;
}
