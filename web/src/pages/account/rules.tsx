import { useState } from 'react';
import { api, legacyOk } from '../../api.ts';
import { useI18n } from '../../i18n/index.tsx';
import { Alert, Card, Field, Loading, Table, submit, useAction, useLoad } from '../../ui.tsx';

const BLANK = { Name: '', Message: '', PositiveContext: '', PositiveResponse: '', NegativeContext: '', NegativeResponse: '', DefaultResponse: '' };

/** Automatic replies: the Legacy v2 context rules (a message, then an answer chosen by the keywords of the reply). */
export function RulesPage() {
  const { t } = useI18n();
  const rules = useLoad(async () => (await legacyOk(api.GET('/api/v2/sendingcontextrules'))).Object);
  const [form, setForm] = useState(BLANK);
  const [sendTo, setSendTo] = useState<Record<string, string>>({});
  const action = useAction();
  const set = (k: keyof typeof BLANK) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  const body = Object.fromEntries(Object.entries(form).filter(([k, v]) => v !== '' || k === 'Name' || k === 'Message')) as typeof BLANK;

  return (
    <>
      <h1>{t('rules.title')}</h1>
      <p className="muted">{t('rules.intro')}</p>
      <Card title={t('rules.new')}>
        <form
          className="grid2"
          onSubmit={submit(() =>
            action.run(async () => {
              const r = await legacyOk(api.POST('/api/v2/sendingcontextrules', { body }));
              setForm(BLANK);
              await rules.reload();
              return r.Message;
            }),
          )}
        >
          <Field label={t('rules.name')}>
            <input name="ruleName" required maxLength={200} value={form.Name} onChange={set('Name')} />
          </Field>
          <Field label={t('rules.message')}>
            <textarea name="ruleMessage" rows={2} required value={form.Message} onChange={set('Message')} />
          </Field>
          <Field label={t('rules.positive')} hint={t('rules.keywordsHint')}>
            <input name="positiveContext" value={form.PositiveContext} onChange={set('PositiveContext')} />
          </Field>
          <Field label={t('rules.positiveResponse')}>
            <input name="positiveResponse" value={form.PositiveResponse} onChange={set('PositiveResponse')} />
          </Field>
          <Field label={t('rules.negative')} hint={t('rules.keywordsHint')}>
            <input name="negativeContext" value={form.NegativeContext} onChange={set('NegativeContext')} />
          </Field>
          <Field label={t('rules.negativeResponse')}>
            <input name="negativeResponse" value={form.NegativeResponse} onChange={set('NegativeResponse')} />
          </Field>
          <Field label={t('rules.default')}>
            <input name="defaultResponse" value={form.DefaultResponse} onChange={set('DefaultResponse')} />
          </Field>
          <div className="filter-actions">
            <button type="submit" className="primary" disabled={action.busy}>
              {t('common.save')}
            </button>
          </div>
        </form>
      </Card>
      <Alert error={action.error} done={action.done} />
      <Loading loading={rules.loading && !rules.data} error={rules.error} />
      <Card title={t('rules.list')}>
        <Table head={[t('rules.name'), t('rules.message'), t('rules.answers'), t('rules.sendTo'), '']} empty={(rules.data ?? []).length === 0}>
          {(rules.data ?? []).map((r) => (
            <tr key={r.Id} data-rule={r.Name}>
              <td>{r.Name}</td>
              <td className="wrap">{r.Message}</td>
              <td className="wrap small">
                {r.PositiveContext ? (
                  <div>
                    <b>{r.PositiveContext}</b> → {r.PositiveResponse}
                  </div>
                ) : null}
                {r.NegativeContext ? (
                  <div>
                    <b>{r.NegativeContext}</b> → {r.NegativeResponse}
                  </div>
                ) : null}
                {r.DefaultResponse ? (
                  <div>
                    <i>{t('rules.otherwise')}</i> → {r.DefaultResponse}
                  </div>
                ) : null}
              </td>
              <td>
                <form
                  className="inline"
                  onSubmit={submit(() =>
                    action.run(async () => {
                      const answer = await legacyOk(
                        api.POST('/api/v2/sendcontextmessage', { body: { ContextRuleName: r.Name, Receivers: sendTo[r.Name] ?? '' } }),
                      );
                      setSendTo({ ...sendTo, [r.Name]: '' });
                      return answer.Message;
                    }),
                  )}
                >
                  <input
                    aria-label={t('rules.sendTo')}
                    placeholder="11999998888"
                    value={sendTo[r.Name] ?? ''}
                    onChange={(e) => setSendTo({ ...sendTo, [r.Name]: e.target.value })}
                  />
                  <button type="submit" className="small primary" disabled={action.busy || !sendTo[r.Name]}>
                    {t('rules.send')}
                  </button>
                </form>
              </td>
              <td>
                <button
                  type="button"
                  className="small danger"
                  onClick={() =>
                    void action.run(async () => {
                      const answer = await legacyOk(api.DELETE('/api/v2/sendingcontextrules/{id}', { params: { path: { id: r.Name } }, body: {} }));
                      await rules.reload();
                      return answer.Message;
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
    </>
  );
}
