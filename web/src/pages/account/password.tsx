import { useState } from 'react';
import { useI18n } from '../../i18n/index.tsx';
import { panel } from '../../panel.ts';
import { useSession } from '../../session.tsx';
import { Alert, Card, Field, submit, useAction } from '../../ui.tsx';

export function PasswordPage() {
  const { t } = useI18n();
  const { session } = useSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const action = useAction();
  return (
    <>
      <h1>{t('password.title')}</h1>
      <Card>
        <p className="muted">{t('password.signedInAs', { email: session.email })}</p>
        <form
          onSubmit={submit(() =>
            action.run(async () => {
              await panel.changePassword(current, next);
              setCurrent('');
              setNext('');
              return t('password.changed');
            }),
          )}
        >
          <Field label={t('password.current')}>
            <input type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
          </Field>
          <Field label={t('password.next')} hint={t('password.rule')}>
            <input type="password" autoComplete="new-password" required minLength={10} value={next} onChange={(e) => setNext(e.target.value)} />
          </Field>
          <Alert error={action.error} done={action.done} />
          <button type="submit" className="primary" disabled={action.busy}>
            {t('password.submit')}
          </button>
        </form>
      </Card>
    </>
  );
}
