// The service's errors as the client reports them: the RFC 9457 problem body, and VouchError carrying it.

/** An RFC 9457 problem body as the service sends it. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  request_id?: string;
  errors?: { field: string; message: string }[];
  [member: string]: unknown;
}

/** A non-2xx answer from the service (or a token request that failed). */
export class VouchError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly detail: string | undefined;
  readonly errors: { field: string; message: string }[] | undefined;
  readonly requestId: string | undefined;
  readonly problem: Problem;

  constructor(status: number, problem: Problem) {
    super(`${status} ${problem.code ?? 'error'}: ${problem.detail ?? problem.title ?? 'request failed'}`);
    this.name = 'VouchError';
    this.status = status;
    this.problem = problem;
    this.code = problem.code;
    this.detail = problem.detail;
    this.errors = problem.errors;
    this.requestId = problem.request_id;
  }
}

export async function problemOf(res: Response): Promise<Problem> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as unknown;
    if (body && typeof body === 'object') return body as Problem;
  } catch {
    // not JSON: fall through
  }
  return { status: res.status, detail: text || res.statusText };
}
