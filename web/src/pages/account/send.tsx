import { useState } from 'react';
import { api, ok } from '../../api.ts';
import { useI18n } from '../../i18n/index.tsx';
import { Link } from '../../router.tsx';
import { countText, parseNumbers } from '../../sms.ts';
import { Alert, Card, Field, submit, useAction, useLoad } from '../../ui.tsx';

interface Route {
  id: number;
  displayName: string;
  farePrice: number;
  productName: string;
}

export function SendPage() {
  const { t } = useI18n();
  const routes = useLoad(async () => (await ok(api.GET('/routes'))).object as Route[]);
  const groups = useLoad(async () => (await ok(api.GET('/contacts'))).object);
  const [channel, setChannel] = useState<'SMS' | 'RCS'>('SMS');
  return (
    <>
      <h1>{t('send.title')}</h1>
      <div className="tabs" role="tablist">
        {(['SMS', 'RCS'] as const).map((c) => (
          <button key={c} type="button" role="tab" aria-selected={channel === c} className={channel === c ? 'active' : ''} onClick={() => setChannel(c)}>
            {c === 'SMS' ? t('send.sms') : t('send.rcsBasic')}
          </button>
        ))}
      </div>
      <Alert error={routes.error ?? groups.error} />
      <SendForm key={channel} channel={channel} routes={routes.data ?? []} groups={groups.data ?? []} />
    </>
  );
}

function SendForm({ channel, routes, groups }: { channel: 'SMS' | 'RCS'; routes: Route[]; groups: { id: number; name: string; validContacts: number }[] }) {
  const { t, number } = useI18n();
  const [numbers, setNumbers] = useState('');
  const [chosenGroups, setChosenGroups] = useState<number[]>([]);
  const [routeId, setRouteId] = useState('');
  const [schedule, setSchedule] = useState('');
  const [message, setMessage] = useState('');
  const [tag, setTag] = useState('');
  const [requestId, setRequestId] = useState<string | null>(null);
  const action = useAction();

  const channelRoutes = routes.filter((r) => (channel === 'RCS' ? r.productName.toUpperCase().includes('RCS') : !r.productName.toUpperCase().includes('RCS')));
  const shown = channelRoutes.length > 0 ? channelRoutes : routes;
  const route = shown.find((r) => String(r.id) === routeId) ?? shown[0];
  const receivers = parseNumbers(numbers);
  const groupContacts = groups.filter((g) => chosenGroups.includes(g.id)).reduce((n, g) => n + g.validContacts, 0);
  const recipients = receivers.length + groupContacts;
  const count = countText(message);
  const perReceiver = channel === 'SMS' ? count.charged : message ? 1 : 0;
  const credits = route ? recipients * perReceiver * route.farePrice : 0;

  const send = () =>
    action.run(async () => {
      setRequestId(null);
      const body = {
        message,
        ...(receivers.length ? { receivers } : {}),
        ...(chosenGroups.length ? { contactGroups: chosenGroups } : {}),
        ...(route ? { route: route.id } : {}),
        ...(schedule ? { scheduleDate: new Date(schedule).toISOString() } : {}),
        ...(tag ? { tag } : {}),
      };
      const call = channel === 'SMS' ? api.POST('/messages/sms/send', { body }) : api.POST('/messages/rcs/basic/send', { body });
      const { response } = await call;
      const answer = await ok(call);
      setRequestId(response.headers.get('x-request-id'));
      setMessage('');
      return answer.message ?? t('send.accepted');
    });

  return (
    <Card>
      <form onSubmit={submit(send)} className="send-form">
        <Field label={t('send.numbers')} hint={t('send.numbersHint')}>
          <textarea name="numbers" rows={3} value={numbers} onChange={(e) => setNumbers(e.target.value)} placeholder="5511999998888, 5521988887777" />
        </Field>
        {groups.length > 0 ? (
          <fieldset className="groups">
            <legend>{t('send.groups')}</legend>
            {groups.map((g) => (
              <label key={g.id} className="check">
                <input
                  type="checkbox"
                  checked={chosenGroups.includes(g.id)}
                  onChange={(e) => setChosenGroups(e.target.checked ? [...chosenGroups, g.id] : chosenGroups.filter((id) => id !== g.id))}
                />
                {g.name} ({number(g.validContacts)})
              </label>
            ))}
          </fieldset>
        ) : null}
        <div className="row">
          <Field label={t('send.route')}>
            <select name="route" value={route ? String(route.id) : ''} onChange={(e) => setRouteId(e.target.value)}>
              {shown.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.id} · {r.displayName} ({number(r.farePrice, 2)})
                </option>
              ))}
            </select>
          </Field>
          <Field label={t('send.schedule')} hint={t('send.scheduleHint')}>
            <input name="schedule" type="datetime-local" value={schedule} onChange={(e) => setSchedule(e.target.value)} />
          </Field>
          <Field label={t('send.tag')}>
            <input name="tag" value={tag} maxLength={100} onChange={(e) => setTag(e.target.value)} />
          </Field>
        </div>
        <Field label={t('send.message')}>
          <textarea name="message" rows={5} required maxLength={channel === 'SMS' ? 2000 : 1000} value={message} onChange={(e) => setMessage(e.target.value)} />
        </Field>
        <p className="counter" data-testid="counter">
          {channel === 'SMS'
            ? t('send.countSms', { characters: count.characters, encoding: count.encoding, parts: count.parts, charged: count.charged })
            : t('send.countRcs', { characters: count.characters })}
          {' · '}
          {t('send.credits', { recipients: number(recipients), credits: number(credits, 2) })}
        </p>
        <Alert error={action.error} done={action.done} />
        {requestId ? (
          <p className="muted">
            {t('send.requestId')}: <code>{requestId}</code> · <Link to={`reports?requestId=${requestId}`}>{t('send.seeReport')}</Link>
          </p>
        ) : null}
        <button type="submit" className="primary" disabled={action.busy || recipients === 0 || !message}>
          {schedule ? t('send.schedule.submit') : t('send.submit')}
        </button>
      </form>
    </Card>
  );
}
