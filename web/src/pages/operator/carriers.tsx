import { useCallback, useRef, useState } from 'react';
import type { components } from '@messaging-gateway/client';
import { api, ok } from '../../api.ts';
import { useI18n } from '../../i18n/index.tsx';
import { Card, Loading, Table, useLoad, usePoll } from '../../ui.tsx';

const EVERY_MS = 3000;

type Carrier = components['schemas']['CarrierConnections'][number];
interface Sample {
  at: number;
  /** Each connection's submits since the gateway process started, by result (GET /admin/carriers). */
  submits: Map<string, Carrier['submitted']>;
}
interface Event {
  at: Date;
  connector: string;
  text: string;
  error: boolean;
}

export function OperatorCarriersPage() {
  const { t, number, date } = useI18n();
  const previous = useRef<Sample | null>(null);
  const lastReady = useRef(new Map<string, boolean>());
  const [rates, setRates] = useState<Map<string, number>>(new Map());
  const [events, setEvents] = useState<Event[]>([]);
  const [updated, setUpdated] = useState<Date | null>(null);

  const load = useCallback(async () => {
    const [carriers, cluster] = await Promise.all([ok(api.GET('/admin/carriers')), ok(api.GET('/admin/cluster'))]);
    const now = Date.now();
    const found: Event[] = [];
    for (const c of carriers) {
      const before = lastReady.current.get(c.name);
      if (before !== undefined && before !== c.ready)
        found.push({ at: new Date(), connector: c.name, text: c.ready ? t('carriers.wentUp') : t('carriers.wentDown'), error: !c.ready });
      lastReady.current.set(c.name, c.ready);
    }
    // Rates are the counters' differences between two refreshes; a counter that went down (another process answered, or it restarted) starts over.
    const prev = previous.current;
    if (prev) {
      const seconds = (now - prev.at) / 1000;
      const next = new Map<string, number>();
      for (const c of carriers) {
        const was = prev.submits.get(c.name);
        if (!was) continue;
        next.set(c.name, Math.max(0, c.submitted.accepted - was.accepted) / seconds);
        for (const result of ['retry', 'failed'] as const) {
          const more = c.submitted[result] - was[result];
          if (more > 0) found.push({ at: new Date(), connector: c.name, text: t(`carriers.submits.${result}`, { count: more }), error: true });
        }
      }
      setRates(next);
    }
    previous.current = { at: now, submits: new Map(carriers.map((c) => [c.name, c.submitted])) };
    if (found.length) setEvents((e) => [...found.reverse(), ...e].slice(0, 20));
    setUpdated(new Date());
    return { carriers, cluster };
  }, [t]);
  const { data, error, loading, reload } = useLoad(load, [load]);
  usePoll(reload, EVERY_MS);

  return (
    <>
      <h1>{t('carriers.title')}</h1>
      <p className="muted small" aria-live="polite">
        {t('carriers.refreshed', { seconds: EVERY_MS / 1000 })}
        {updated ? ` · ${updated.toLocaleTimeString()}` : ''}
      </p>
      <Loading loading={loading && !data} error={error} />
      {data ? (
        <>
          <Card title={t('carriers.connections')}>
            <Table
              head={[
                t('carriers.name'),
                t('carriers.channels'),
                t('carriers.bind'),
                t('carriers.window'),
                t('carriers.queued'),
                t('carriers.sending'),
                t('carriers.scheduled'),
                t('carriers.rate'),
              ]}
              empty={data.carriers.length === 0}
            >
              {data.carriers.map((c) => (
                <tr key={c.name} data-carrier={c.name} data-ready={String(c.ready)}>
                  <td>
                    <strong>{c.name}</strong>
                  </td>
                  <td>{c.channels.join(', ')}</td>
                  <td>
                    {c.ready ? <span className="badge s-delivered">{t('carriers.up')}</span> : <span className="badge s-failed">{t('carriers.down')}</span>}
                  </td>
                  <td>{number(c.capacity)}</td>
                  <td>{number(c.queued)}</td>
                  <td>{number(c.sending)}</td>
                  <td>{number(c.scheduled)}</td>
                  <td>{rates.has(c.name) ? `${number(rates.get(c.name) ?? 0, 1)}/s` : '—'}</td>
                </tr>
              ))}
            </Table>
          </Card>
          <Card title={t('carriers.outbox')}>
            <Table head={[t('carriers.name'), t('carriers.queued'), t('carriers.sending'), t('carriers.scheduled')]} empty={data.cluster.outbox.length === 0}>
              {data.cluster.outbox.map((o) => (
                <tr key={o.connector}>
                  <td>{o.connector}</td>
                  <td>{number(o.queued)}</td>
                  <td>{number(o.sending)}</td>
                  <td>{number(o.scheduled)}</td>
                </tr>
              ))}
            </Table>
          </Card>
          <Card title={t('carriers.processes')}>
            <Table head={[t('carriers.role'), t('carriers.host'), t('carriers.pid'), t('carriers.started'), t('carriers.lastSeen'), t('carriers.runs')]}>
              {data.cluster.processes.map((p) => (
                <tr key={p.id}>
                  <td>
                    {p.role}
                    {p.self ? ' *' : ''}
                  </td>
                  <td>{p.host}</td>
                  <td>{p.pid}</td>
                  <td>{date(p.startedAt)}</td>
                  <td>{date(p.lastSeenAt)}</td>
                  <td>{p.connectors.join(', ')}</td>
                </tr>
              ))}
            </Table>
          </Card>
          <Card title={t('carriers.lastErrors')}>
            {events.length === 0 ? (
              <p className="muted">{t('carriers.noErrors')}</p>
            ) : (
              <ul className="events" data-testid="events">
                {events.map((e, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a log, newest first.
                  <li key={i} className={e.error ? 'error' : ''}>
                    <time>{e.at.toLocaleTimeString()}</time> <strong>{e.connector}</strong> {e.text}
                  </li>
                ))}
              </ul>
            )}
            <p className="muted small">{t('carriers.errorsHint')}</p>
          </Card>
        </>
      ) : null}
    </>
  );
}
