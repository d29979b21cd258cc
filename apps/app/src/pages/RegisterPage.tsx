import { Anchor, Button, Group, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { computeCodeChallenge, generateCodeVerifier } from '@hearth/core';
import { OperationOutcomeAlert, useAction, useHearthContext } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { Link, useNavigate } from 'react-router';
import { AuthLayout } from '../components/AuthLayout.js';

/** Register: a new user (POST /auth/newuser), then their new project (POST /auth/newproject), signed in. */
export function RegisterPage(): ReactNode {
  const { client, refreshSession } = useHearthContext();
  const navigate = useNavigate();
  const [form, setForm] = useState({ firstName: '', lastName: '', email: '', password: '', projectName: '' });
  const { busy, error, submit } = useAction();
  const field = (key: keyof typeof form) => ({
    value: form[key],
    onChange: (e: { currentTarget: { value: string } }) => setForm({ ...form, [key]: e.currentTarget.value }),
  });
  return (
    <AuthLayout title="Register a new project">
      <form
        onSubmit={submit(async () => {
          const codeVerifier = generateCodeVerifier();
          const codeChallenge = await computeCodeChallenge(codeVerifier);
          const { projectName, ...user } = form;
          const { login } = await client.post<{ login: string }>(
            'auth/newuser',
            { ...user, email: user.email.trim(), codeChallenge, codeChallengeMethod: 'S256' },
            'application/json',
            { noAuth: true },
          );
          const { code } = await client.post<{ login: string; code: string }>(
            'auth/newproject',
            { login, projectName },
            'application/json',
            { noAuth: true },
          );
          await client.processCode(code, { codeVerifier });
          await refreshSession();
          navigate('/');
        })}
      >
        <Stack>
          <Group grow>
            <TextInput label="First name" required autoComplete="given-name" {...field('firstName')} />
            <TextInput label="Last name" required autoComplete="family-name" {...field('lastName')} />
          </Group>
          <TextInput label="Email" type="email" required autoComplete="email" {...field('email')} />
          <PasswordInput
            label="Password"
            required
            autoComplete="new-password"
            description="At least 8 characters"
            {...field('password')}
          />
          <TextInput label="Project name" required {...field('projectName')} />
          <OperationOutcomeAlert error={error} />
          <Button type="submit" loading={busy}>
            Create account
          </Button>
          <Text size="sm" ta="center">
            Already registered?{' '}
            <Anchor component={Link} to="/signin">
              Sign in
            </Anchor>
          </Text>
        </Stack>
      </form>
    </AuthLayout>
  );
}
