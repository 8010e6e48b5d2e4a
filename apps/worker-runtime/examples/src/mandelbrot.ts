// One square tile of a fixed picture of the Mandelbrot set (real part -2.25..0.75,
// imaginary part -1.5..1.5). Args: x y tileSize imageSize maxIterations, where x and y
// are the tile's top-left pixel. Prints a header line "x y w h imageSize maxIterations" (so a
// tile can be placed without knowing the job's parameters) then h lines of w pixels, two hex
// digits each (grey 0..255; 0 is inside the set).
const argv = process.argv;
if (argv.length < 6) {
  process.stderr.write("usage: mandelbrot <x> <y> <tileSize> <imageSize> <maxIterations>\n");
  process.exit(2);
}
const x0 = <i32>parseInt(argv[1]);
const y0 = <i32>parseInt(argv[2]);
const tile = <i32>parseInt(argv[3]);
const size = <i32>parseInt(argv[4]);
const maxIter = <i32>parseInt(argv[5]);
const w = min(tile, size - x0);
const h = min(tile, size - y0);
if (x0 < 0 || y0 < 0 || w <= 0 || h <= 0 || maxIter <= 0) {
  process.stderr.write("tile outside the image\n");
  process.exit(2);
}

const HEX = "0123456789abcdef";
const scale = 3.0 / <f64>size;
const row = new Uint8Array(w * 2 + 1);
row[w * 2] = 10;
process.stdout.write(
  x0.toString() + " " + y0.toString() + " " + w.toString() + " " + h.toString() + " " + size.toString() + " " + maxIter.toString() + "\n",
);
for (let py = 0; py < h; py++) {
  const ci = 1.5 - (<f64>(y0 + py) + 0.5) * scale;
  for (let px = 0; px < w; px++) {
    const cr = -2.25 + (<f64>(x0 + px) + 0.5) * scale;
    let zr = 0.0, zi = 0.0;
    let n = 0;
    while (n < maxIter && zr * zr + zi * zi <= 4.0) {
      const t = zr * zr - zi * zi + cr;
      zi = 2.0 * zr * zi + ci;
      zr = t;
      n++;
    }
    // Square-root shading spreads the few-iteration outside region over more greys.
    const grey = n >= maxIter ? 0 : <i32>(Math.sqrt(<f64>n / <f64>maxIter) * 254.0) + 1;
    row[px * 2] = HEX.charCodeAt(grey >> 4);
    row[px * 2 + 1] = HEX.charCodeAt(grey & 15);
  }
  process.stdout.write(row.buffer);
}
