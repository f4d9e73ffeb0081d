/**
 * Rounds to the nearest integer, ties to even, as Python's `round`: the crop offsets and sizes
 * of torchvision's transforms are computed with it, and matching it keeps a crop here the
 * same pixels as torchvision's for the same image and parameters. @internal
 */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  // Math.round sends ties up; a tie whose upper neighbour is odd belongs to the even one below.
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}
