import { useState } from 'react';
import { LanguageSwitch, useI18n } from '../i18n/index.tsx';
import { type Session, panel } from '../panel.ts';
import { Alert, Field, submit, useAction } from '../ui.tsx';

export function SignInPage({ onSignedIn }: { onSignedIn(s: Session): void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  return (
    <div className="sign-in">
      <form
        className="card"
        onSubmit={submit(() =>
          action.run(async () => {
            onSignedIn(await panel.signIn(email.trim(), password));
          }),
        )}
      >
        <div className="sign-in-head">
          <h1>{t('app.title')}</h1>
          <LanguageSwitch />
        </div>
        <p className="muted">{t('signIn.intro')}</p>
        <Field label={t('signIn.email')}>
          <input name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </Field>
        <Field label={t('signIn.password')}>
          <input name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <Alert error={action.error} />
        <button type="submit" className="primary" disabled={action.busy}>
          {t('signIn.submit')}
        </button>
        <p className="muted small">{t('signIn.operatorHint')}</p>
      </form>
    </div>
  );
}
