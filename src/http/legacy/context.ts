import type { Kysely } from 'kysely';
import type { Core } from '../../core.ts';
import type { Database } from '../../db/tables.ts';
import type { Texts } from './texts.ts';
import type { ReportWindow } from './limits.ts';

/** What every legacy route module is given at registration. */
export interface LegacyContext {
  core: Core;
  db: Kysely<Database>;
  t: Texts;
  reports: ReportWindow;
}
