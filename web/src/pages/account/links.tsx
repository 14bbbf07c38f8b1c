import { useState } from 'react';
import { api, ok } from '../../api.ts';
import { useI18n } from '../../i18n/index.tsx';
import { Alert, Card, Field, Loading, Pager, Table, submit, useAction, useLoad } from '../../ui.tsx';

const LIMIT = 50;

export function LinksPage() {
  const { t, number, date } = useI18n();
  const [skip, setSkip] = useState(0);
  const links = useLoad(() => ok(api.GET('/short-links', { params: { query: { skip, limit: LIMIT } } })), [skip]);
  const [url, setUrl] = useState('');
  const action = useAction();
  return (
    <>
      <h1>{t('links.title')}</h1>
      <p className="muted">{t('links.intro')}</p>
      <Card title={t('links.new')}>
        <form
          className="row"
          onSubmit={submit(() =>
            action.run(async () => {
              const r = await ok(api.POST('/short-links', { body: { destinationUrl: url } }));
              setUrl('');
              await links.reload();
              return r.message ?? '';
            }),
          )}
        >
          <Field label={t('links.destination')}>
            <input name="destinationUrl" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/promo" />
          </Field>
          <div className="filter-actions">
            <button type="submit" className="primary" disabled={action.busy}>
              {t('links.create')}
            </button>
            <button type="button" onClick={() => void links.reload()}>
              {t('common.refresh')}
            </button>
          </div>
        </form>
      </Card>
      <Alert error={action.error} done={action.done} />
      <Loading loading={links.loading && !links.data} error={links.error} />
      {links.data ? (
        <Card>
          <Table
            head={[t('links.short'), t('links.destination'), t('links.clicks'), t('links.humans'), t('links.bots'), t('links.createdAt'), '']}
            empty={(links.data.object ?? []).length === 0}
          >
            {(links.data.object ?? []).map((l) => (
              <tr key={l.id} data-link={l.code}>
                <td>
                  <a href={l.shortUrl} target="_blank" rel="noreferrer">
                    {l.shortUrl}
                  </a>
                </td>
                <td className="wrap">{l.destinationUrl}</td>
                <td data-testid="clicks">{number(l.accessCount)}</td>
                <td data-testid="humans">{number(l.humanAccessCount)}</td>
                <td>{number(l.botAccessCount)}</td>
                <td>{date(l.createdAt)}</td>
                <td>
                  <button
                    type="button"
                    className="small danger"
                    onClick={() =>
                      void action.run(async () => {
                        await ok(api.DELETE('/short-links/{id}', { params: { path: { id: l.id } } }));
                        await links.reload();
                      })
                    }
                  >
                    {t('common.delete')}
                  </button>
                </td>
              </tr>
            ))}
          </Table>
          <Pager skip={skip} limit={LIMIT} total={links.data.totalRecords} onChange={setSkip} />
        </Card>
      ) : null}
    </>
  );
}
