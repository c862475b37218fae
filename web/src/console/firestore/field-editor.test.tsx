import { cleanup, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { ToastProvider } from '@/components/ui/toaster';
import { FieldEditor } from './field-editor';
import type { Value } from './values';

const db = 'projects/p/databases/(default)';

function edit(name: string | undefined, value: Value | undefined) {
  const onSave = vi.fn(async () => undefined);
  render(
    <ToastProvider>
      <FieldEditor db={db} name={name} value={value} onSave={onSave} onCancel={() => undefined} />
    </ToastProvider>,
  );
  return onSave;
}

describe('console FieldEditor', () => {
  it('adds a typed member to a map, keeping the others’ types', async () => {
    const user = userEvent.setup();
    const onSave = edit('meta', {
      mapValue: { fields: { at: { timestampValue: '2026-01-31T12:00:00.123456Z' } } },
    });
    await user.click(screen.getByRole('button', { name: 'Add key to meta' }));
    await user.type(screen.getAllByLabelText('Key in meta').at(-1) as HTMLElement, 'where');
    await user.selectOptions(screen.getByLabelText('Type of meta.where'), 'geopoint');
    const where = screen.getByLabelText('Value of meta.where');
    expect(where).toHaveValue('0, 0');
    await user.clear(where);
    await user.type(where, '48.85, 2.35');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(onSave).toHaveBeenCalled());
    expect(onSave).toHaveBeenCalledWith(
      'meta',
      {
        mapValue: {
          fields: {
            at: { timestampValue: '2026-01-31T12:00:00.123456Z' },
            where: { geoPointValue: { latitude: 48.85, longitude: 2.35 } },
          },
        },
      },
      [],
    );
  });

  it('builds a new array element by element and refuses an array in an array', async () => {
    const user = userEvent.setup();
    const onSave = edit(undefined, undefined);
    await user.type(screen.getByLabelText('Field name'), 'slots');
    await user.selectOptions(screen.getByLabelText('Type'), 'array');
    await user.click(screen.getByRole('button', { name: 'Add element to slots' }));
    await user.selectOptions(screen.getByLabelText('Type of slots[0]'), 'array');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText(/slots\[0\]: An array cannot hold an array directly/)).toBeVisible();
    expect(onSave).not.toHaveBeenCalled();
    await user.selectOptions(screen.getByLabelText('Type of slots[0]'), 'null');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(onSave).toHaveBeenCalledWith('slots', { arrayValue: { values: [{ nullValue: null }] } }, []),
    );
  });

  it('puts the cursor in the value of the field it edits, and in the name of a new one', () => {
    edit('title', { stringValue: 'Hi' });
    expect(screen.getByLabelText('Value')).toHaveFocus();
    cleanup();
    edit(undefined, undefined);
    expect(screen.getByLabelText('Field name')).toHaveFocus();
  });
});
