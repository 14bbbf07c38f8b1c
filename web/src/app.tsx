import { type ReactNode, useCallback, useEffect, useState } from 'react';
import { api, whenSignedOut } from './api.ts';
import { LanguageSwitch, type TextKey, useI18n } from './i18n/index.tsx';
import { ChildUsersPage } from './pages/account/child-users.tsx';
import { ContactsPage } from './pages/account/contacts.tsx';
import { DashboardPage } from './pages/account/dashboard.tsx';
import { DeveloperPage } from './pages/account/developer.tsx';
import { LinksPage } from './pages/account/links.tsx';
import { PasswordPage } from './pages/account/password.tsx';
import { ReportsPage } from './pages/account/reports.tsx';
import { RulesPage } from './pages/account/rules.tsx';
import { SendPage } from './pages/account/send.tsx';
import { WebhooksPage } from './pages/account/webhooks.tsx';
import { OperatorAccountsPage } from './pages/operator/accounts.tsx';
import { OperatorCarriersPage } from './pages/operator/carriers.tsx';
import { OperatorRoutesPage } from './pages/operator/routes.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { type Session, panel } from './panel.ts';
import { Link, navigate, usePath } from './router.tsx';
import { SessionContext } from './session.tsx';

interface Page {
  path: string;
  label: TextKey;
  render: () => ReactNode;
}

const ACCOUNT_PAGES: Page[] = [
  { path: '', label: 'nav.dashboard', render: () => <DashboardPage /> },
  { path: 'send', label: 'nav.send', render: () => <SendPage /> },
  { path: 'reports', label: 'nav.reports', render: () => <ReportsPage /> },
  { path: 'contacts', label: 'nav.contacts', render: () => <ContactsPage /> },
  { path: 'rules', label: 'nav.rules', render: () => <RulesPage /> },
  { path: 'links', label: 'nav.links', render: () => <LinksPage /> },
  { path: 'webhooks', label: 'nav.webhooks', render: () => <WebhooksPage /> },
  { path: 'child-users', label: 'nav.childUsers', render: () => <ChildUsersPage /> },
  { path: 'developer', label: 'nav.developer', render: () => <DeveloperPage /> },
  { path: 'password', label: 'nav.password', render: () => <PasswordPage /> },
];

const OPERATOR_PAGES: Page[] = [
  { path: 'operator/carriers', label: 'nav.carriers', render: () => <OperatorCarriersPage /> },
  { path: 'operator/accounts', label: 'nav.accounts', render: () => <OperatorAccountsPage /> },
  { path: 'operator/routes', label: 'nav.routes', render: () => <OperatorRoutesPage /> },
];

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    whenSignedOut(() => setSession(null));
    panel.session().then(setSession, () => setSession(null));
  }, []);
  const signOut = useCallback(async () => {
    await panel.signOut().catch(() => undefined);
    setSession(null);
    navigate('');
  }, []);

  if (session === undefined) return null;
  if (session === null)
    return (
      <SignInPage
        onSignedIn={(s) => {
          setSession(s);
          navigate(s.operator ? 'operator/carriers' : '');
        }}
      />
    );
  return (
    <SessionContext.Provider value={{ session, signOut }}>
      <Shell session={session} signOut={signOut} />
    </SessionContext.Provider>
  );
}

function Shell({ session, signOut }: { session: Session; signOut(): Promise<void> }) {
  const { t } = useI18n();
  const path = usePath();
  const [menuOpen, setMenuOpen] = useState(false);
  // Child users are a reseller's: the page is listed when the account may list them.
  const [reseller, setReseller] = useState(false);
  useEffect(() => {
    if (session.operator || session.account?.parentId !== null) return;
    api.GET('/child-users', { params: { query: { limit: 1 } } }).then(
      (r) => setReseller(r.response.ok),
      () => undefined,
    );
  }, [session]);
  const pages = session.operator ? OPERATOR_PAGES : ACCOUNT_PAGES.filter((p) => p.path !== 'child-users' || reseller);
  const page = pages.find((p) => p.path === path) ?? pages[0];
  // biome-ignore lint/correctness/useExhaustiveDependencies: the menu closes when the page changes.
  useEffect(() => setMenuOpen(false), [path]);
  return (
    <div className="shell">
      <header className="top">
        <button type="button" className="menu-button" aria-expanded={menuOpen} onClick={() => setMenuOpen(!menuOpen)}>
          ☰ <span className="sr-only">{t('nav.menu')}</span>
        </button>
        <Link to={pages[0]?.path ?? ''} className="brand">
          {session.operator ? t('app.operatorConsole') : t('app.title')}
        </Link>
        <div className="who">
          <span className="muted who-name">{session.account?.name ?? session.email}</span>
          <LanguageSwitch />
          <button type="button" className="link" onClick={() => void signOut()}>
            {t('nav.signOut')}
          </button>
        </div>
      </header>
      <div className="body">
        <nav className={`side ${menuOpen ? 'open' : ''}`} aria-label={t('nav.menu')}>
          {pages.map((p) => (
            <Link key={p.path} to={p.path} className={p === page ? 'active' : ''}>
              {t(p.label)}
            </Link>
          ))}
        </nav>
        <main>{page ? <div key={page.path}>{page.render()}</div> : null}</main>
      </div>
    </div>
  );
}
