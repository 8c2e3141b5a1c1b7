// What the builder's destructive forms do, said before it is done (kit/confirm.tsx). The lookup
// is the viewer's own (getDashboard), so no confirmation page names a dashboard they cannot see.
import type { Deps } from '../../../core/deps.ts';
import { getDashboard } from '../../../dashboards/manage.ts';
import type { ConfirmRule } from '../kit/confirm.tsx';

export function dashboardConfirmations(deps: Deps): ConfirmRule[] {
  const find = (c: Parameters<ConfirmRule['describe']>[0], id: string) =>
    getDashboard(deps.sql, c.get('principal'), id).catch(() => null);
  return [
    {
      path: '/dashboards/:id/delete',
      async describe(c, p) {
        const d = await find(c, p.id!);
        if (!d) return null;
        return {
          title: `Delete the dashboard ${d.name}?`,
          consequences: [
            `Its ${d.panels.length} panel${d.panels.length === 1 ? '' : 's'} and its sharing are deleted for good; this cannot be undone.`,
            'People who open its link get "not found". Workflows its buttons started are not touched.',
          ],
          button: 'Delete the dashboard',
          back: `/dashboards/${d.id}/edit`,
        };
      },
    },
    {
      path: '/dashboards/:id/edit/panels/:panelId/delete',
      async describe(c, p) {
        const d = await find(c, p.id!);
        const panel = d?.panels.find((x) => x.id === p.panelId);
        if (!d || !panel) return null;
        return {
          title: `Delete the panel ${panel.title || 'Untitled panel'}?`,
          consequences: [
            `It leaves ${d.name} with its query and ${panel.actions.length} row action${panel.actions.length === 1 ? '' : 's'}.`,
          ],
          button: 'Delete the panel',
          back: `/dashboards/${d.id}/edit`,
        };
      },
    },
    {
      path: '/dashboards/:id/edit/unshare',
      async describe(c, p) {
        const d = await find(c, p.id!);
        if (!d) return null;
        const form = c.get('form');
        const who = form.role ? `everyone with the ${form.role} role` : 'this person';
        return {
          title: `Stop sharing ${d.name} with ${who}?`,
          consequences: [
            `${who[0]!.toUpperCase()}${who.slice(1)} no longer sees it, unless shared otherwise.`,
          ],
          button: 'Stop sharing',
          back: `/dashboards/${d.id}/edit`,
        };
      },
    },
  ];
}
