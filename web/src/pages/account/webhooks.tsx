import { useState } from 'react';
import { api, ok } from '../../api.ts';
import { useI18n } from '../../i18n/index.tsx';
import { Alert, Card, Field, Loading, Status, Table, submit, useAction, useLoad } from '../../ui.tsx';

const TOPICS = ['message.status', 'message.reply'] as const;

export function WebhooksPage() {
  const { t, date } = useI18n();
  const hooks = useLoad(async () => (await ok(api.GET('/webhooks'))).object ?? []);
  const [url, setUrl] = useState('');
  const [topics, setTopics] = useState<string[]>([...TOPICS]);
  const [secret, setSecret] = useState<string | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const action = useAction();
  return (
    <>
      <h1>{t('webhooks.title')}</h1>
      <p className="muted">{t('webhooks.intro')}</p>
      <Card title={t('webhooks.new')}>
        <form
          className="row"
          onSubmit={submit(() =>
            action.run(async () => {
              const r = await ok(api.POST('/webhooks', { body: { url, topics: topics as (typeof TOPICS)[number][] } }));
              setSecret(r.object?.secret ?? null);
              setUrl('');
              await hooks.reload();
            }),
          )}
        >
          <Field label={t('webhooks.url')}>
            <input name="webhookUrl" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://hooks.example.com/sms" />
          </Field>
          <fieldset className="groups">
            <legend>{t('webhooks.topics')}</legend>
            {TOPICS.map((topic) => (
              <label key={topic} className="check">
                <input
                  type="checkbox"
                  checked={topics.includes(topic)}
                  onChange={(e) => setTopics(e.target.checked ? [...topics, topic] : topics.filter((x) => x !== topic))}
                />
                {topic}
              </label>
            ))}
          </fieldset>
          <div className="filter-actions">
            <button type="submit" className="primary" disabled={action.busy || topics.length === 0}>
              {t('webhooks.create')}
            </button>
          </div>
        </form>
        {secret ? (
          <div className="alert done new-key">
            <p>{t('webhooks.secretOnce')}</p>
            <code className="key">{secret}</code>
          </div>
        ) : null}
      </Card>
      <Alert error={action.error} done={action.done} />
      <Loading loading={hooks.loading && !hooks.data} error={hooks.error} />
      <Card title={t('webhooks.list')}>
        <Table head={[t('webhooks.url'), t('webhooks.topics'), t('webhooks.createdAt'), '']} empty={(hooks.data ?? []).length === 0}>
          {(hooks.data ?? []).map((h) => (
            <tr key={h.id} data-webhook={h.id}>
              <td className="wrap">{h.url}</td>
              <td>{h.topics.join(', ')}</td>
              <td>{date(h.createdAt)}</td>
              <td className="nowrap">
                <button type="button" className="small" onClick={() => setOpen(open === h.id ? null : h.id)}>
                  {t('webhooks.deliveries')}
                </button>
                <button
                  type="button"
                  className="small danger"
                  onClick={() =>
                    void action.run(async () => {
                      await ok(api.DELETE('/webhooks/{id}', { params: { path: { id: h.id } } }));
                      if (open === h.id) setOpen(null);
                      await hooks.reload();
                    })
                  }
                >
                  {t('common.delete')}
                </button>
              </td>
            </tr>
          ))}
        </Table>
      </Card>
      {open !== null ? <Deliveries id={open} /> : null}
      <Callbacks />
    </>
  );
}

/** The account's Legacy v2 callback URLs (GET/PUT /panel/api/callbacks): empty turns one off. */
function Callbacks() {
  const { t } = useI18n();
  const saved = useLoad(() => ok(api.GET('/panel/api/callbacks')));
  const [edit, setEdit] = useState<{ replyUrl: string; statusUrl: string } | null>(null);
  const form = edit ?? { replyUrl: saved.data?.replyUrl ?? '', statusUrl: saved.data?.statusUrl ?? '' };
  const action = useAction();
  return (
    <Card title={t('callbacks.title')}>
      <p className="muted small">{t('callbacks.intro')}</p>
      <Loading loading={saved.loading && !saved.data} error={saved.error} />
      <form
        onSubmit={submit(() =>
          action.run(async () => {
            await ok(api.PUT('/panel/api/callbacks', { body: { replyUrl: form.replyUrl.trim() || null, statusUrl: form.statusUrl.trim() || null } }));
            setEdit(null);
            await saved.reload();
            return t('callbacks.saved');
          }),
        )}
      >
        <Field label={t('callbacks.replyUrl')}>
          <input
            name="callbackReplyUrl"
            type="url"
            value={form.replyUrl}
            onChange={(e) => setEdit({ ...form, replyUrl: e.target.value })}
            placeholder="https://example.com/sms/reply"
          />
        </Field>
        <Field label={t('callbacks.statusUrl')}>
          <input
            name="callbackStatusUrl"
            type="url"
            value={form.statusUrl}
            onChange={(e) => setEdit({ ...form, statusUrl: e.target.value })}
            placeholder="https://example.com/sms/status"
          />
        </Field>
        <div className="filter-actions">
          <button type="submit" className="primary" disabled={action.busy || !saved.data}>
            {t('callbacks.save')}
          </button>
        </div>
      </form>
      <Alert error={action.error} done={action.done} />
    </Card>
  );
}

function Deliveries({ id }: { id: number }) {
  const { t, date } = useI18n();
  const list = useLoad(() => ok(api.GET('/webhooks/{id}/deliveries', { params: { path: { id }, query: { limit: 100 } } })), [id]);
  const again = useAction();
  return (
    <Card
      title={t('webhooks.deliveriesOf', { id })}
      actions={
        <button type="button" className="small" onClick={() => void list.reload()}>
          {t('common.refresh')}
        </button>
      }
    >
      <Alert error={again.error ?? list.error} done={again.done} />
      <Table
        head={[
          t('webhooks.event'),
          t('webhooks.status'),
          t('webhooks.attempts'),
          t('webhooks.lastAnswer'),
          t('webhooks.lastAttempt'),
          t('webhooks.nextAttempt'),
          '',
        ]}
        empty={(list.data?.object ?? []).length === 0}
      >
        {(list.data?.object ?? []).map((d) => (
          <tr key={d.id} data-delivery={d.id} data-status={d.status}>
            <td>
              {d.eventType}
              <br />
              <code className="small">{d.id}</code>
            </td>
            <td>
              <Status status={d.status} />
            </td>
            <td>{d.attempts}</td>
            <td className="wrap">{d.lastHttpStatus ?? d.lastError ?? '—'}</td>
            <td>{date(d.lastAttemptAt)}</td>
            <td>{date(d.nextAttemptAt)}</td>
            <td>
              {d.status === 'FAILED' ? (
                <button
                  type="button"
                  className="small"
                  disabled={again.busy}
                  onClick={() =>
                    void again.run(async () => {
                      await resend(id, d.id);
                      await list.reload();
                      return t('webhooks.sentAgain');
                    })
                  }
                >
                  {t('webhooks.sendAgain')}
                </button>
              ) : null}
            </td>
          </tr>
        ))}
      </Table>
    </Card>
  );
}

/** POST /webhooks/{id}/deliveries/{deliveryId}/retry: sends a failed delivery again. */
async function resend(webhookId: number, deliveryId: string): Promise<void> {
  await ok(api.POST('/webhooks/{id}/deliveries/{deliveryId}/retry', { params: { path: { id: webhookId, deliveryId } } }));
}
