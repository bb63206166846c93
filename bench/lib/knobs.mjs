// A bench's size knobs, read from the environment (`BENCH_TURNS=300 node bench/….mjs` for a quick
// run or a profile); `pnpm bench` runs the defaults.
export const knob = (name, fallback) => Number(process.env[`BENCH_${name}`] ?? fallback);
