// Node flags every replay worker process starts with (npm start, npm run worker, the bench).
//
// A bounded old space: with V8's default limit (a few GB on this machine) the worker let garbage pile
// up between major collections, so its peak memory grew with the length of the run (10,000 -> 100,000
// targets: 1.14x, 1.17x and 1.37x in three runs) although nothing was kept. Bounded at 160 MB, the
// same runs peaked at 226 MB at both sizes (1.00x) and the 100,000-target replay was no slower (346
// sends/s); a leak would have ended it with an out-of-memory error instead. package.json's "worker"
// script repeats this flag (npm scripts cannot import it).
export const WORKER_HEAP_MB = 160;
export const WORKER_NODE_ARGS = [`--max-old-space-size=${WORKER_HEAP_MB}`];
