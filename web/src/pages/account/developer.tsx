import { useState } from 'react';
import { useI18n } from '../../i18n/index.tsx';
import { type ApiKey, panel } from '../../panel.ts';
import { Alert, Card, Field, Loading, Table, submit, useAction, useLoad } from '../../ui.tsx';

function ips(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export function DeveloperPage() {
  const { t, date } = useI18n();
  const keys = useLoad(() => panel.keys());
  const info = useLoad(() => panel.info());
  const [newIps, setNewIps] = useState('');
  const [created, setCreated] = useState<{ key: string; prefix: string } | null>(null);
  const action = useAction();
  const live = (keys.data ?? []).filter((k) => !k.revokedAt);
  const example = created?.key ?? live[0]?.prefix ?? '<your API key>';
  const base = info.data?.gatewayBaseUrl ?? window.location.origin;

  return (
    <>
      <h1>{t('developer.title')}</h1>
      <Card title={t('developer.keys')}>
        <p className="muted">{t('developer.keysIntro')}</p>
        <form
          className="row"
          onSubmit={submit(() =>
            action.run(async () => {
              const key = await panel.createKey(ips(newIps));
              setCreated(key);
              setNewIps('');
              await keys.reload();
            }),
          )}
        >
          <Field label={t('developer.allowedIps')} hint={t('developer.allowedIpsHint')}>
            <input name="allowedIps" value={newIps} onChange={(e) => setNewIps(e.target.value)} placeholder="203.0.113.7, 198.51.100.0/24" />
          </Field>
          <div className="filter-actions">
            <button type="submit" className="primary" disabled={action.busy}>
              {t('developer.create')}
            </button>
          </div>
        </form>
        {created ? (
          <div className="alert done new-key" role="status">
            <p>{t('developer.shownOnce')}</p>
            <code data-testid="new-key" className="key">
              {created.key}
            </code>
            <button type="button" className="small" onClick={() => void navigator.clipboard?.writeText(created.key)}>
              {t('developer.copy')}
            </button>
          </div>
        ) : null}
        <Alert error={action.error} done={action.done} />
        <Loading loading={keys.loading && !keys.data} error={keys.error} />
        <Table
          head={[t('developer.key'), t('developer.allowedIps'), t('developer.createdAt'), t('developer.state'), '']}
          empty={(keys.data ?? []).length === 0}
        >
          {(keys.data ?? []).map((k) => (
            <KeyRow key={k.id} apiKey={k} reload={keys.reload} date={date} />
          ))}
        </Table>
      </Card>
      <Card title={t('developer.baseUrls')}>
        <dl className="facts">
          <dt>{t('developer.gatewayBase')}</dt>
          <dd>
            <code data-testid="gateway-base">{base}</code>
          </dd>
          <dt>{t('developer.legacyBase')}</dt>
          <dd>
            <code>{info.data?.legacyBaseUrl ?? `${base}/api/v2`}</code>
          </dd>
          <dt>{t('developer.docs')}</dt>
          <dd>
            <a href="/docs">{`${base}/docs`}</a> · <a href="/openapi.json">openapi.json</a>
          </dd>
          {info.data ? (
            <>
              <dt>{t('developer.version')}</dt>
              <dd>{info.data.version}</dd>
            </>
          ) : null}
        </dl>
      </Card>
      <Card title={t('developer.example')}>
        <pre className="code" data-testid="curl">{`curl -s -X POST ${base}/messages/sms/send \\
  -H 'x-api-key: ${example}' -H 'content-type: application/json' \\
  -d '{"receivers":[5511999998888],"message":"Hello from the gateway!"}'

curl -s ${info.data?.legacyBaseUrl ?? `${base}/api/v2`}/detailedreporting -H 'auth-key: ${example}'`}</pre>
        {created ? null : <p className="muted small">{t('developer.exampleHint')}</p>}
      </Card>
    </>
  );
}

function KeyRow({ apiKey, reload, date }: { apiKey: ApiKey; reload(): Promise<void>; date(iso: string | null): string }) {
  const { t } = useI18n();
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState((apiKey.allowedIps ?? []).join(', '));
  const action = useAction();
  const revoked = Boolean(apiKey.revokedAt);
  return (
    <tr data-key-id={apiKey.id}>
      <td>
        <code>{apiKey.prefix}</code>
      </td>
      <td>
        {editing ? (
          <form
            className="inline"
            onSubmit={submit(() =>
              action.run(async () => {
                await panel.setAllowedIps(apiKey.id, ips(text));
                setEditing(false);
                await reload();
              }),
            )}
          >
            <input aria-label={t('developer.allowedIps')} value={text} onChange={(e) => setText(e.target.value)} />
            <button type="submit" className="small primary" disabled={action.busy}>
              {t('common.save')}
            </button>
          </form>
        ) : apiKey.allowedIps?.length ? (
          apiKey.allowedIps.join(', ')
        ) : (
          <span className="muted">{t('developer.anyAddress')}</span>
        )}
        <Alert error={action.error} />
      </td>
      <td>{date(apiKey.createdAt)}</td>
      <td>
        {revoked ? <span className="badge s-cancelled">{t('developer.revoked')}</span> : <span className="badge s-delivered">{t('developer.active')}</span>}
      </td>
      <td className="nowrap">
        {revoked ? null : (
          <>
            {editing ? null : (
              <button type="button" className="small" onClick={() => setEditing(true)}>
                {t('developer.editIps')}
              </button>
            )}
            <button
              type="button"
              className="small danger"
              disabled={action.busy}
              onClick={() => {
                if (!window.confirm(t('developer.revokeConfirm'))) return;
                void action.run(async () => {
                  await panel.revokeKey(apiKey.id);
                  await reload();
                });
              }}
            >
              {t('developer.revoke')}
            </button>
          </>
        )}
      </td>
    </tr>
  );
}
