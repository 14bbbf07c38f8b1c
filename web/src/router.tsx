import { type ReactNode, useEffect, useState } from 'react';

/** Client-side pages under /panel/ (the server answers index.html for any of them). */
const BASE = '/panel/';

function current(): string {
  const p = window.location.pathname;
  return p.startsWith(BASE) ? p.slice(BASE.length).replace(/\/$/, '') : '';
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => {
  for (const l of listeners) l();
});

export function navigate(to: string): void {
  window.history.pushState(null, '', BASE + to);
  for (const l of listeners) l();
  window.scrollTo(0, 0);
}

/** The page's path without /panel/, e.g. "reports/sent". */
export function usePath(): string {
  const [path, setPath] = useState(current);
  useEffect(() => {
    const l = () => setPath(current());
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return path;
}

export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  return (
    <a
      href={BASE + to}
      className={className}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
