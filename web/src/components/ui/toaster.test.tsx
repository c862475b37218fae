import { act, render, screen } from '@testing-library/react';
import { appendToast, clampText, TOAST_CONFIG, useToast } from './toast-context';
import { ToastProvider } from './toaster';

function Trigger() {
  const show = useToast();
  return (
    <button onClick={() => show({ title: 'New feedback', description: 'Ana left a comment' })}>go</button>
  );
}

describe('TOAST_CONFIG', () => {
  it('follows the spec: 5000 ms, swipe right past 50, 100 kept, F8', () => {
    expect(TOAST_CONFIG).toEqual({
      durationMs: 5000,
      swipeDirection: 'right',
      swipeThreshold: 50,
      maxKept: 100,
      hotkey: ['F8'],
    });
  });
});

describe('appendToast', () => {
  it('keeps only the newest 100', () => {
    let list: number[] = [];
    for (let i = 1; i <= 105; i++) list = appendToast(list, i);
    expect(list).toHaveLength(100);
    expect(list[0]).toBe(6);
    expect(list.at(-1)).toBe(105);
  });
});

describe('clampText', () => {
  it('keeps short text and cuts long text with an ellipsis', () => {
    expect(clampText('  Saved  ', 10)).toBe('Saved');
    expect(clampText('abcdefghijkl', 6)).toBe('abcde…');
    expect(clampText('👍'.repeat(8), 4)).toBe('👍👍👍…');
  });
});

function Burst() {
  const show = useToast();
  return (
    <button
      onClick={() => {
        for (let i = 1; i <= 5; i++) show({ title: `Toast ${i}`, description: 'x'.repeat(500) });
      }}
    >
      burst
    </button>
  );
}

describe('ToastProvider', () => {
  it('shows three toasts at once and queues the rest, with long messages clamped', () => {
    vi.useFakeTimers();
    try {
      render(
        <ToastProvider>
          <Burst />
        </ToastProvider>,
      );
      act(() => screen.getByRole('button', { name: 'burst' }).click());
      expect(screen.getAllByText(/^Toast \d$/).map((e) => e.textContent)).toEqual([
        'Toast 1',
        'Toast 2',
        'Toast 3',
      ]);
      expect(screen.getAllByText(/^x+…$/)[0]?.textContent).toHaveLength(160);
      act(() => vi.advanceTimersByTime(5100));
      expect(screen.getAllByText(/^Toast \d$/).map((e) => e.textContent)).toEqual(['Toast 4', 'Toast 5']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('shows the title and message, and closes itself after 5 seconds', () => {
    vi.useFakeTimers();
    try {
      render(
        <ToastProvider>
          <Trigger />
        </ToastProvider>,
      );
      act(() => screen.getByRole('button', { name: 'go' }).click());
      expect(screen.getByText('New feedback')).toBeInTheDocument();
      expect(screen.getByText('Ana left a comment')).toBeInTheDocument();
      expect(screen.getByRole('region', { name: /F8/ })).toBeInTheDocument();
      act(() => vi.advanceTimersByTime(4900));
      expect(screen.getByText('New feedback')).toBeInTheDocument();
      act(() => vi.advanceTimersByTime(200));
      expect(screen.queryByText('New feedback')).not.toBeInTheDocument();
    } finally {
      vi.useRealTimers();
    }
  });

  it('marks a failure red and everything else with the brand colour', () => {
    function Both() {
      const show = useToast();
      return (
        <button
          onClick={() => {
            show({ title: 'Profile saved' });
            show({ tone: 'error', title: 'Could not save your profile' });
          }}
        >
          both
        </button>
      );
    }
    render(
      <ToastProvider>
        <Both />
      </ToastProvider>,
    );
    act(() => screen.getByRole('button', { name: 'both' }).click());
    const mark = (title: string) =>
      screen.getByText(title).closest('li')?.querySelector('[data-tone]')?.className ?? '';
    expect(mark('Profile saved')).toContain('bg-brand-400');
    expect(mark('Could not save your profile')).toContain('bg-red-400');
  });
});
