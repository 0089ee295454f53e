// The one linear solve of the fit's Newton steps (fit.ts): a Cholesky factorisation of the small
// dense Hessian (one row and column per signal, plus the bias), with a growing ridge when rounding
// leaves it only semi-definite.

/** Solves A·x = b for a symmetric positive semi-definite A, adding a growing ridge if needed. */
export function solveSpd(A: number[][], b: number[]): number[] {
  const n = b.length;
  const scale = Math.max(1e-300, ...A.map((r, i) => Math.abs(r[i]!)));
  for (let jitter = 0; ; jitter = jitter === 0 ? 1e-12 * scale : jitter * 100) {
    const L = Array.from({ length: n }, () => new Array<number>(n).fill(0));
    let ok = true;
    for (let i = 0; i < n && ok; i++) {
      for (let j = 0; j <= i; j++) {
        let sum = A[i]![j]! + (i === j ? jitter : 0);
        for (let k = 0; k < j; k++) sum -= L[i]![k]! * L[j]![k]!;
        if (i === j) {
          if (!(sum > 0)) ok = false;
          else L[i]![i] = Math.sqrt(sum);
        } else L[i]![j] = sum / L[j]![j]!;
      }
    }
    if (!ok) {
      if (jitter > scale) throw new Error('fit: the Hessian cannot be factorised');
      continue;
    }
    const z = new Array<number>(n).fill(0);
    for (let i = 0; i < n; i++) {
      let sum = b[i]!;
      for (let k = 0; k < i; k++) sum -= L[i]![k]! * z[k]!;
      z[i] = sum / L[i]![i]!;
    }
    const x = new Array<number>(n).fill(0);
    for (let i = n - 1; i >= 0; i--) {
      let sum = z[i]!;
      for (let k = i + 1; k < n; k++) sum -= L[k]![i]! * x[k]!;
      x[i] = sum / L[i]![i]!;
    }
    return x;
  }
}
