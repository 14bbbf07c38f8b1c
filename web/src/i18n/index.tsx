import { createContext, type ReactNode, useContext, useMemo, useState } from 'react';
import { en, type Texts } from './en.ts';
import { ptBR } from './pt-BR.ts';

/** The panel's two languages; every text is in both dictionaries (en.ts, pt-BR.ts). */
export const LANGUAGES = { en: en, 'pt-BR': ptBR } as const;
export type Language = keyof typeof LANGUAGES;
export type TextKey = keyof Texts;
export type T = (key: TextKey, vars?: Record<string, string | number>) => string;

const STORAGE = 'panel.language';

/** The saved choice, else the browser's: Portuguese for any pt-*, English otherwise. */
export function initialLanguage(): Language {
  const saved = localStorage.getItem(STORAGE);
  if (saved === 'en' || saved === 'pt-BR') return saved;
  return (navigator.languages ?? [navigator.language]).some((l) => l.toLowerCase().startsWith('pt')) ? 'pt-BR' : 'en';
}

interface I18n {
  language: Language;
  setLanguage(l: Language): void;
  t: T;
  /** Numbers and dates in the language's format. */
  number(n: number, digits?: number): string;
  date(iso: string | null | undefined): string;
}

const Context = createContext<I18n | null>(null);

export function I18nProvider({ children }: { children: ReactNode }) {
  const [language, setLanguageState] = useState<Language>(initialLanguage);
  const value = useMemo<I18n>(() => {
    const dict: Texts = LANGUAGES[language];
    document.documentElement.lang = language;
    document.title = dict['app.title'];
    return {
      language,
      setLanguage(l) {
        localStorage.setItem(STORAGE, l);
        setLanguageState(l);
      },
      t: (key, vars) => {
        let s: string = dict[key] ?? en[key] ?? key;
        if (vars) for (const [k, v] of Object.entries(vars)) s = s.replaceAll(`{${k}}`, String(v));
        return s;
      },
      number: (n, digits) =>
        new Intl.NumberFormat(language, digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(n),
      date: (iso) => (iso ? new Date(iso).toLocaleString(language, { dateStyle: 'short', timeStyle: 'medium' }) : '—'),
    };
  }, [language]);
  return <Context.Provider value={value}>{children}</Context.Provider>;
}

export function useI18n(): I18n {
  const v = useContext(Context);
  if (!v) throw new Error('useI18n outside I18nProvider');
  return v;
}

/** The language menu of the header and the sign-in page. */
export function LanguageSwitch() {
  const { language, setLanguage, t } = useI18n();
  return (
    <select aria-label={t('app.language')} value={language} onChange={(e) => setLanguage(e.target.value as Language)} className="lang">
      {Object.keys(LANGUAGES).map((l) => (
        <option key={l} value={l}>
          {l === 'en' ? 'English' : 'Português'}
        </option>
      ))}
    </select>
  );
}
