import { type DependencyList, type FormEvent, type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { useI18n } from './i18n/index.tsx';

/** Loads data when the page opens (and when deps change); `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: DependencyList = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const latest = useRef(load);
  latest.current = load;
  const reload = useCallback(async () => {
    const n = ++seq.current;
    setLoading(true);
    try {
      const value = await latest.current();
      if (n === seq.current) {
        setData(value);
        setError(null);
      }
    } catch (err) {
      if (n === seq.current) setError(err instanceof Error ? err.message : String(err));
    } finally {
      if (n === seq.current) setLoading(false);
    }
  }, []);
  // The values the load depends on, as one key: it loads again when one changes.
  const key = JSON.stringify(deps);
  // biome-ignore lint/correctness/useExhaustiveDependencies: key stands for the caller's dependencies.
  useEffect(() => {
    void reload();
  }, [reload, key]);
  return { data, error, loading, reload };
}

/** Calls `load` every `ms` while the page is open. */
export function usePoll(reload: () => Promise<void>, ms: number) {
  useEffect(() => {
    const timer = setInterval(() => void reload(), ms);
    return () => clearInterval(timer);
  }, [reload, ms]);
}

/** A form action: busy while it runs, then its message or its error. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const message = await action();
      if (typeof message === 'string' && message) setDone(message);
      return true;
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, done, run, setDone, setError };
}

export function submit(handler: () => void) {
  return (e: FormEvent) => {
    e.preventDefault();
    handler();
  };
}

export function Alert({ error, done }: { error?: string | null; done?: string | null }) {
  return (
    <>
      {error ? (
        <p className="alert error" role="alert">
          {error}
        </p>
      ) : null}
      {done ? (
        <p className="alert done" role="status">
          {done}
        </p>
      ) : null}
    </>
  );
}

export function Field({ label, children, hint }: { label: string; children: ReactNode; hint?: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the children (an input, select or textarea).
    <label className="field">
      <span>{label}</span>
      {children}
      {hint ? <small>{hint}</small> : null}
    </label>
  );
}

export function Card({ title, children, actions }: { title?: ReactNode; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card">
      {title || actions ? (
        <header>
          {title ? <h2>{title}</h2> : null}
          {actions ? <div className="actions">{actions}</div> : null}
        </header>
      ) : null}
      {children}
    </section>
  );
}

/** Tables scroll inside their box: the page itself never gets wider than the screen. */
export function Table({ head, children, empty }: { head: ReactNode[]; children: ReactNode; empty?: boolean }) {
  const { t } = useI18n();
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            {head.map((h, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: fixed columns.
              <th key={i}>{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {empty ? (
            <tr>
              <td colSpan={head.length} className="muted">
                {t('common.empty')}
              </td>
            </tr>
          ) : (
            children
          )}
        </tbody>
      </table>
    </div>
  );
}

export function Pager({ skip, limit, total, onChange }: { skip: number; limit: number; total: number; onChange(skip: number): void }) {
  const { t } = useI18n();
  const page = Math.floor(skip / limit) + 1;
  const pages = Math.max(1, Math.ceil(total / limit));
  return (
    <nav className="pager" aria-label={t('common.pages')}>
      <button type="button" disabled={skip === 0} onClick={() => onChange(Math.max(0, skip - limit))}>
        ‹ {t('common.previous')}
      </button>
      <span>{t('common.pageOf', { page, pages, total })}</span>
      <button type="button" disabled={skip + limit >= total} onClick={() => onChange(skip + limit)}>
        {t('common.next')} ›
      </button>
    </nav>
  );
}

export function Loading({ loading, error }: { loading: boolean; error: string | null }) {
  const { t } = useI18n();
  if (error) return <Alert error={error} />;
  return loading ? <p className="muted">{t('common.loading')}</p> : null;
}

/** A status name as a coloured badge. */
export function Status({ status }: { status: string }) {
  return <span className={`badge s-${status.toLowerCase()}`}>{status}</span>;
}

/** Dates the API takes: YYYY-MM-DD of `days` ago (UTC). */
export function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}
