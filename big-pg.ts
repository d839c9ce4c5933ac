import { buildBigLedger } from './test/bench/big-ledger-bench.ts';
import { copyLedger, loadManifest } from './src/index.ts';
const big = buildBigLedger();
console.log(big.dir);
const m = { ok: true, manifest: loadManifest(big.manifestFile) };
if (!m.ok) throw new Error('x');
const t0 = performance.now();
const copied = await copyLedger(m.manifest, { to: 'postgres://dev:secretpw@127.0.0.1:55432/big', cwd: big.dir });
console.log('copy ms', performance.now() - t0, copied);
