// What the policy routes share: the records they answer with, the job view, and the row a route
// asked for. (The repository's and the job slot's errors are domain errors,
// lib/domain-errors.ts: they reach the caller as problems with no mapping here.)
import type { FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import type { Store } from '../store/db.ts';
import { NotFound, type FieldError } from '../lib/domain-errors.ts';
import type { Environment } from '../lib/principal.ts';
import type { JobStatus } from './jobs.ts';
import type { Claimant } from './job-turns.ts';
import type { JobSchema, PolicyDetail, PolicyRecord } from './schemas.ts';
import { getPolicy, parseDocument, type PolicyRow } from './repository.ts';
import { namePolicy, policyActors } from './policy-actors.ts';

export function policyRecord(row: PolicyRow): Static<typeof PolicyRecord> {
  return {
    version: row.version,
    status: row.status as Static<typeof PolicyRecord>['status'],
    source: row.source as Static<typeof PolicyRecord>['source'],
    parent_version: row.parent_version,
    created_at: new Date(Number(row.created_at)).toISOString(),
    created_by: row.created_by,
    ...policyActors(row),
    summary: summary(row),
  };
}

export function policyDetail(row: PolicyRow): Static<typeof PolicyDetail> {
  return {
    ...policyRecord(row),
    document: parseDocument(row),
    report: row.report ? (JSON.parse(row.report) as unknown) : null,
  };
}

/** validatePolicy's one-line message, split into the fields it names. */
export function policyFieldErrors(message: string): FieldError[] {
  const body = message.replace(/^invalid [^:]*: /, '').replace(/ \(and \d+ more\)$/, '');
  return body.split(/; (?=\/)/).map((part) => {
    const m = /^(\/[^:]*): (.*)$/.exec(part);
    const field = m ? m[1]!.replace(/^\//, '').replace(/\//g, '.') || '(body)' : '(body)';
    return { field, message: m ? m[2]! : part };
  });
}

export async function requireRow(store: Store, environment: Environment, version: string): Promise<PolicyRow> {
  const row = await getPolicy(store.db, environment, version);
  if (!row) throw new NotFound('No such policy version.');
  return namePolicy(store.db, row);
}

export function jobView(job: JobStatus): Static<typeof JobSchema> {
  return {
    id: job.id,
    kind: job.kind as Static<typeof JobSchema>['kind'],
    started_at: new Date(job.startedAt).toISOString(),
    updated_at: new Date(job.updatedAt).toISOString(),
    phase: job.phase,
    decisions_read: job.decisionsRead,
    labelled: job.labelled,
    total: job.total,
    fraction: job.total === null ? null : job.total === 0 ? 1 : Math.min(1, job.decisionsRead / job.total),
  };
}

/** Who asks for the job slot, for its fair share (job-turns.ts): one turn per client, admins first. */
export const claimantOf = (request: FastifyRequest): Claimant => ({
  clientId: request.principal.clientId,
  admin: request.principal.role === 'admin',
});

/** A short line for lists: what the policy is and, for a fit, how it did on the holdout. */
function summary(row: PolicyRow): string {
  const report = row.report
    ? (JSON.parse(row.report) as {
        labels?: { fraud: number; legit: number };
        metrics?: { candidate?: { roc_auc: number | null } };
      })
    : undefined;
  if (row.source === 'fit' && report?.labels) {
    const auc = report.metrics?.candidate?.roc_auc;
    return `fitted on ${report.labels.fraud} fraud and ${report.labels.legit} legit decisions from ${row.parent_version ?? 'the active policy'}; holdout ROC-AUC ${auc === null || auc === undefined ? 'n/a' : auc.toFixed(3)}`;
  }
  const doc = parseDocument(row);
  const words: Record<string, string> = {
    builtin: 'the built-in policy',
    file: 'loaded from VOUCH_POLICY_FILE',
    upload: 'uploaded',
    fit: 'fitted',
    derived: `derived from ${row.parent_version ?? 'another version'}`,
  };
  const what = words[row.source] ?? row.source;
  return `${what}; bias ${doc.bias}, thresholds ${doc.thresholds.medium}/${doc.thresholds.high}/${doc.thresholds.critical}`;
}

/** text/html listed before (or without) application/json. */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((t) => t.split(';')[0]!.trim().toLowerCase());
  const html = types.indexOf('text/html');
  const json = types.findIndex((t) => t === 'application/json' || t === 'application/problem+json');
  return html !== -1 && (json === -1 || html < json);
}
